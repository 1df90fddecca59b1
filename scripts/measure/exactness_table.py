"""How far each task's reference is from its exact answer, from `kernelgate tasks check
--json` output (the task check's float64 pass, verdict schema 1.5; held-out sets from 1.6):
one row per task run in full, the largest share of the tolerance first, then the ones not
measured and why.

usage: python3 scripts/measure/exactness_table.py check.json [more.json ...]
"""
import json
import sys

WARN = 0.5   # kgharness.judge.taskcheck.EXACT_WARN


def rows(paths):
    for path in paths:
        with open(path, encoding="utf-8") as f:
            for r in json.load(f):
                v = r.get("verdict") or {}
                info = v.get("task_info") or {}
                if info.get("depth") != "full":
                    continue
                tol = v.get("tolerance") or {}
                yield r["id"], tol, info.get("reference_error") or {}


def inputs(err):
    return f"h{err['held']}" if err.get("held") is not None else str(err.get("seed"))


def main(paths):
    measured, unmeasured = [], []
    for tid, tol, err in rows(paths):
        (measured if err.get("used") is not None else unmeasured).append((tid, tol, err))
    measured.sort(key=lambda x: -x[2]["used"])
    print(f"{'task':48} {'dtype':9} {'source':8} {'atol':>8} {'rtol':>8} {'used':>7}  seed  where "
          "(h0: held-out set 0, where one call is too large for the pass; a floor)")
    for tid, tol, err in measured:
        where = f"output {err.get('output')} {err.get('index')}: {err.get('reference')} vs {err.get('exact')}"
        print(f"{tid:48} {tol.get('dtype', '?'):9} {tol.get('source', '?'):8} {tol.get('atol', 0):8.2g} "
              f"{tol.get('rtol', 0):8.2g} {err['used']:7.3f}  {inputs(err):4}  {where}")
    for tid, _, err in unmeasured:
        print(f"{tid:48} not measured: {err.get('note', 'no reference_error (a binary before schema 1.5?)')}")
    over = sum(e["used"] > WARN for _, _, e in measured)
    past = sum(e["used"] > 1 for _, _, e in measured)
    held = sum(e.get("held") is not None for _, _, e in measured)
    print(f"\n{len(measured)} measured ({held} on held-out sets only), {len(unmeasured)} not; "
          f"{over} over {WARN} of their tolerance (warned), {past} over 1 (an exact kernel rejected on that seed)")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
