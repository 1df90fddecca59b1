"""Two grpo_bench.py reports of the same load (say sharing off and on): whether every
member got the same status and flags, and the ratio of their speedups.

usage: python3 scripts/measure/compare_grpo.py A.json B.json
"""
import json
import statistics
import sys


def members(path):
    r = json.load(open(path))
    return {(g["task_id"], i): m for g in r["per_group"] for i, m in enumerate(g["members"])}


def main(a_path, b_path):
    a, b = members(a_path), members(b_path)
    keys = sorted(a.keys() & b.keys())
    same = [k for k in keys if (a[k]["status"], sorted(a[k]["hack_flags"] or [])) ==
            (b[k]["status"], sorted(b[k]["hack_flags"] or []))]
    ratios = [b[k]["speedup"] / a[k]["speedup"] for k in keys if a[k].get("speedup") and b[k].get("speedup")]
    print(f"{len(same)} of {len(keys)} members with the same status and flags "
          f"({len(a)} / {len(b)} in the reports)")
    for k in keys:
        if k not in same:
            print(f"   differ: {k}: {a[k]['status']} {a[k]['hack_flags']} / {b[k]['status']} {b[k]['hack_flags']}")
    if ratios:
        within = sum(1 for x in ratios if abs(x - 1) <= 0.03)
        print(f"speedups B / A over {len(ratios)}: {min(ratios):.3f}-{max(ratios):.3f}, median "
              f"{statistics.median(ratios):.4f}, {within} within 3%")


if __name__ == "__main__":
    main(*sys.argv[1:3])
