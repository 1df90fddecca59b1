"""Table for scripts/measure/h200-concurrency.sh: throughput, latency and stage medians per concurrency.

usage: python3 scripts/measure/summarize_concurrency.py OUT_DIR CONC...
"""
import json
import statistics
import sys


def main(out, *concs):
    keys = ["reference", "first_call", "correctness", "timing", "checks", "lock_wait",
            "lock_shared_held", "lock_exclusive_held", "total"]
    print(f"{'conc':>4s} {'evals/s':>8s} {'p50 s':>6s} {'gpu%':>5s} " + " ".join(f"{k[:10]:>10s}" for k in keys))
    for c in concs:
        try:
            b = json.load(open(f"{out}/bench-{c}.json"))
        except (OSError, ValueError) as e:
            print(f"{c:>4s} no report: {e}")
            continue
        try:
            util = [float(x) for x in open(f"{out}/gpu-util-{c}.txt").read().split() if x.strip()]
        except (OSError, ValueError):
            util = []
        gpu = statistics.mean(util) if util else float("nan")
        st = b.get("stage_median_ms") or {}
        print(f"{c:>4s} {b['evals_per_s']:8.2f} {b['latency_p50_ms'] / 1e3:6.1f} {gpu:5.0f} "
              + " ".join(f"{st.get(k, float('nan')):10.0f}" for k in keys))
        bad = {k: v for k, v in b["statuses"].items() if k != "correct"}
        if bad:
            print(f"     not correct: {bad}")


if __name__ == "__main__":
    main(*sys.argv[1:])
