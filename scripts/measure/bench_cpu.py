"""Where a `kernelgate bench` run's host CPU went: the evaluations' own processes (the
verdict's cpu_judge / cpu_reference / cpu_candidate) against the host's busy share
(scripts/measure/cpu_sampler.py) over the run, to tell a host-bound run from a GPU-bound one.

usage: python3 scripts/measure/bench_cpu.py BENCH.json CPU.txt [CORES]
"""
import json
import os
import statistics
import sys


def main(bench, cpu, cores=None):
    b = json.load(open(bench))
    cores = int(cores or os.cpu_count())
    rows = [r for r in b.get("rows") or [] if isinstance(r.get("stage_ms"), dict)]
    keys = ("cpu_judge", "cpu_reference", "cpu_candidate")
    tot = {k: sum(r["stage_ms"].get(k, 0) for r in rows) / 1e3 for k in keys}
    busy = [float(x.split()[1]) for x in open(cpu) if len(x.split()) == 2]
    wall = b["wall_s"]
    # The sampler runs from before the bench's start to after its end: keep the middle
    # 90% of its samples, where the run is in flight.
    mid = busy[len(busy) // 20: len(busy) - len(busy) // 20] or busy
    host = statistics.mean(mid) * cores * wall if mid else float("nan")
    print(f"{b['evals']} evals in {wall:.1f} s = {b['evals_per_s']:.3f} evals/s on {cores} cores")
    print(f"host busy: median {statistics.median(mid):.0%}, mean {statistics.mean(mid):.0%} "
          f"= {host:.0f} core-s ({host / max(b['evals'], 1):.2f} an evaluation)")
    own = sum(tot.values())
    print("evaluations' processes: " + ", ".join(f"{k} {v:.0f} s" for k, v in tot.items()) +
          f" = {own:.0f} core-s ({own / max(b['evals'], 1):.2f} an evaluation); "
          f"the rest ({host - own:.0f} core-s) is the zygote, the judge service, kernelgate and the OS")
    for k in ("total", "fork", "load", "reference", "correctness", "first_call", "lock_wait",
              "lock_exclusive_held", "lock_frozen", "timing", "reference_cuda", "candidate_cuda") + keys:
        xs = [r["stage_ms"][k] for r in rows if r["stage_ms"].get(k)]
        if xs:
            print(f"  {k:20s} median {statistics.median(xs):8.0f} ms  sum {sum(xs) / 1e3:7.1f} s")


if __name__ == "__main__":
    main(*sys.argv[1:])
