"""Prints the README's measurement table from `kernelgate bench --json` and `doctor --json`.

usage: python3 scripts/measure/summarize_bench.py BENCH.json [DOCTOR.json]
"""
import json
import statistics
import sys


def main(bench_path, doctor_path=None):
    b = json.load(open(bench_path))
    d = json.load(open(doctor_path)) if doctor_path else {}
    rows = b.get("rows") or []
    tasks = sorted({r["task"] for r in rows})
    gpus = (d.get("gpus") or {}).get("devices") or []
    print(f"gpu: {gpus[0].get('name') if gpus else 'none'}  driver: {(d.get('gpus') or {}).get('driver', '')}")
    print(f"evaluations: {b['evals']} over {len(tasks)} tasks, wall {b['wall_s']:.1f} s")
    print(f"throughput: {b['evals_per_s']:.2f} evals/s; latency p50 {b['latency_p50_ms']:.0f} ms, "
          f"p99 {b['latency_p99_ms']:.0f} ms")
    print("statuses: " + ", ".join(f"{k}={v}" for k, v in sorted(b["statuses"].items())))
    st = b.get("stage_median_ms") or {}
    print("stage medians (ms): " + ", ".join(f"{k} {v:.0f}" for k, v in sorted(st.items())))
    print(f"cold zygote start (python + import torch/triton{' + trusted cache fill' if gpus else ''}): "
          f"{d.get('cold_zygote_start_s', float('nan')):.2f} s; warm fork (job -> child running): "
          f"{st.get('fork', float('nan')):.1f} ms")
    sp = b.get("speedup_spreads") or []
    if sp:
        ratios = [s["p90_over_p10"] for s in sp if s.get("p90_over_p10")]
        print(f"speedup repeatability over {sp[0]['n']} repeats: median p90/p10 "
              f"{statistics.median(ratios):.3f}, worst {max(ratios):.3f} (target <= 1.04)")
        print(f"{'task':32s} {'n':>3s} {'median':>8s} {'p10':>7s} {'p90':>7s} {'p90/p10':>8s} {'ref ms':>8s} {'ms':>8s}")
        for s in sp:
            ms = [r for r in rows if r["task"] == s["task"] and r.get("runtime_median_ms")]
            ref = statistics.median(r["ref_median_ms"] for r in ms) if ms else float("nan")
            run = statistics.median(r["runtime_median_ms"] for r in ms) if ms else float("nan")
            print(f"{s['task'][:32]:32s} {s['n']:3d} {s['median']:7.2f}x {s['p10']:6.2f}x {s['p90']:6.2f}x "
                  f"{s['p90_over_p10']:8.3f} {ref:8.3f} {run:8.3f}")
    bad = [r for r in rows if r.get("status") != "correct"]
    for r in bad[:10]:
        print(f"NOT CORRECT: {r['task']} {r.get('status') or r.get('error')}: {r.get('feedback', '')[:120]}")


if __name__ == "__main__":
    main(*sys.argv[1:3])
