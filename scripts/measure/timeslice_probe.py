#!/usr/bin/env python3
"""What a synchronising request costs on a GPU that other processes keep busy.

A heavy evaluation's correctness call (make inputs, checksum them, run, checksum the
outputs, copy them out) synchronises with the GPU several times. Without MPS, kernels of
different processes (CUDA contexts) do not overlap: the GPU time-slices between the
contexts that have work. This probe measures, with K other processes on the GPU, the
latency of (a) a tiny kernel and its synchronize and (b) one heavy-task-sized step (2 GiB
of bf16 made by randn, summed, synchronised), each repeated, in this process.

Background processes: "busy" ones queue 1 GiB elementwise kernels without pause (a
neighbour's correctness work); "bursty" ones sleep 2 ms between short bursts.

usage: python3 scripts/measure/timeslice_probe.py [--ks 0,1,3,7] [--json OUT]
"""

import argparse
import json
import statistics
import subprocess
import sys
import time

WORKER = r"""
import sys, time, torch
mode, seconds = sys.argv[1], float(sys.argv[2])
x = torch.empty(1 << 28, device="cuda")
x.fill_(1.0); torch.cuda.synchronize()
print("ready", flush=True)
end = time.monotonic() + seconds
while time.monotonic() < end:
    if mode == "busy":
        for _ in range(4):
            x.mul_(1.0000001)
        torch.cuda.synchronize()
    else:
        time.sleep(0.002)
        for _ in range(3):
            x[: 1 << 22].add_(1.0)
        torch.cuda.synchronize()
"""


def start(mode, k, seconds):
    procs = [subprocess.Popen([sys.executable, "-c", WORKER, mode, str(seconds)], stdout=subprocess.PIPE, text=True)
             for _ in range(k)]
    for p in procs:
        p.stdout.readline()
    return procs


def probe(torch, reps_tiny=300, reps_heavy=30):
    small = torch.zeros(1, device="cuda")
    tiny = []
    for _ in range(reps_tiny):
        t0 = time.perf_counter()
        small.add_(1.0)
        torch.cuda.synchronize()
        tiny.append((time.perf_counter() - t0) * 1e3)
    heavy = []
    for i in range(reps_heavy):
        t0 = time.perf_counter()
        g = torch.Generator(device="cuda").manual_seed(i)
        a = torch.randn(1 << 30, dtype=torch.bfloat16, device="cuda", generator=g)
        s = int(a.view(torch.uint8).sum(dtype=torch.int64))
        heavy.append((time.perf_counter() - t0) * 1e3)
        del a
        assert s is not None
    return tiny, heavy


def q(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ks", default="0,1,3,7")
    ap.add_argument("--json")
    a = ap.parse_args()
    import torch
    torch.zeros(1, device="cuda")
    probe(torch, 20, 3)   # warm: allocator, randn's kernels
    rows = []
    plan = [("busy", int(k)) for k in a.ks.split(",")] + [("bursty", max(int(k) for k in a.ks.split(",")))]
    for mode, k in plan:
        procs = start(mode, k, 60)
        try:
            tiny, heavy = probe(torch)
        finally:
            for p in procs:
                p.kill()
            for p in procs:
                p.wait()
        row = {"mode": mode, "k": k, "tiny_p50_ms": statistics.median(tiny), "tiny_p90_ms": q(tiny, 0.9),
               "heavy_p50_ms": statistics.median(heavy), "heavy_p90_ms": q(heavy, 0.9)}
        rows.append(row)
        print(f"{mode:6s} K={k}: tiny sync p50 {row['tiny_p50_ms']:.3f} p90 {row['tiny_p90_ms']:.3f} ms; "
              f"2 GiB randn+sum p50 {row['heavy_p50_ms']:.2f} p90 {row['heavy_p90_ms']:.2f} ms", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
