"""A `kernelgate bench --json` run's timing windows: throughput, statuses and flags, the
window an evaluation held (median), and per timed call the judge's time in the request
(`window_go`), in the inputs' own request where a run has one (`window_prep`, before
2026-12-02) and in checksums, with both sides' median overheads on the judge's clock;
then the window's other parts (stops and continues, compares, prelude).

usage: python3 scripts/measure/bench_window.py BENCH.json [BENCH.json ...]
"""
import json
import statistics
import sys


def med(xs):
    xs = [x for x in xs if isinstance(x, (int, float))]
    return statistics.median(xs) if xs else float("nan")


def main(paths):
    for p in paths:
        b = json.load(open(p))
        rows = [r for r in b.get("rows") or [] if isinstance(r.get("stage_ms"), dict)]
        timed = [r for r in rows if r["stage_ms"].get("window_calls")]
        flags = {}
        for r in rows:
            for f in r.get("hack_flags") or []:
                flags[f] = flags.get(f, 0) + 1

        def per_call(k):
            return med(r["stage_ms"].get(k, 0) / r["stage_ms"]["window_calls"] for r in timed)
        wc = [r.get("wall_check") or {} for r in timed]
        print(f"{p}: {b['evals']} evals, {b['evals_per_s']:.3f} evals/s, {b['statuses']}, flags {flags}; "
              f"window {med(r['stage_ms'].get('lock_exclusive_held') for r in timed):.0f} ms, "
              f"{med(r['stage_ms']['window_calls'] for r in timed):.0f} calls; a call: go {per_call('window_go'):.2f}, "
              f"prep {per_call('window_prep'):.2f}, check {per_call('window_check'):.2f} ms; overhead ref "
              f"{med(w.get('ref_overhead_ms') for w in wc):.3f} / cand {med(w.get('cand_overhead_ms') for w in wc):.3f} ms "
              f"(limit {med(w.get('limit_ms') for w in wc):.3f}); frozen {med(r['stage_ms'].get('lock_frozen') for r in rows):.0f} ms")
        # The rest of a window, medians in ms: what is not a call (a pair's stop and
        # continue, a compare, the prelude, before) and how many compares a window made.
        parts = ("switch", "verify", "verifies", "prelude", "before", "pairs", "open", "gate", "close")
        print("    window parts: " + ", ".join(
            f"{k} {med(r['stage_ms'].get('window_' + k) for r in timed):.2f}" for k in parts))
        # Inside a call's request, the runner's own word (2026-12-02 on): inputs, the timed
        # call, the copy into the judge's buffer; the rest of `go` is messages.
        if any("window_go_timed" in r["stage_ms"] for r in timed):
            print("    a call's request, runner's parts: " + ", ".join(
                f"{k} {per_call('window_go_' + k):.2f}" for k in ("inputs", "timed", "write")) + " ms")


if __name__ == "__main__":
    main(sys.argv[1:])
