"""How fast a GPU makes a window's fresh inputs.

Every timed call in a window makes its fresh inputs on both sides, and on the heavy suite
that is over a third of the windows' time (docs/measurements/2026-12-04-heavy-window-ceiling.md):
heavy/7's 14 GiB bf16 input takes 38 ms a call against a 14 ms timed call. This prints,
per size and dtype, the median of CUDA-event times for torch.randn, torch.rand, a scalar
mul_ pass, and a Triton kernel that writes normal values from tl.randn4x (Philox4x32,
Box-Muller); with task files, the per-call cost of each task's get_inputs as a runner
makes them (kgharness.inputs.make_inputs, the last call's inputs dropped first), outside
the harness's guards. GPU only; it changes nothing in the harness.

    python3 scripts/measure/inputs_probe.py [--reps 7] [TASK.py ...]
"""

import argparse
import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import time

import torch
import triton
import triton.language as tl

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "harness", "py"))
from kgharness import inputs as I  # noqa: E402


@triton.jit
def _normal_kernel(out_ptr, n, seed, BLOCK: tl.constexpr, ROUNDS: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    base = pid * (4 * BLOCK)
    lane = tl.arange(0, BLOCK).to(tl.int64)
    r0, r1, r2, r3 = tl.randn4x(seed, base // 4 + lane, ROUNDS)
    ty = out_ptr.dtype.element_ty
    offs = base + lane
    tl.store(out_ptr + offs, r0.to(ty), mask=offs < n)
    tl.store(out_ptr + offs + BLOCK, r1.to(ty), mask=offs + BLOCK < n)
    tl.store(out_ptr + offs + 2 * BLOCK, r2.to(ty), mask=offs + 2 * BLOCK < n)
    tl.store(out_ptr + offs + 3 * BLOCK, r3.to(ty), mask=offs + 3 * BLOCK < n)


def triton_normal(shape, dtype, seed, rounds=10, block=1024):
    out = torch.empty(shape, dtype=dtype, device="cuda")
    n = out.numel()
    grid = (triton.cdiv(n, 4 * block),)
    _normal_kernel[grid](out, n, seed, BLOCK=block, ROUNDS=rounds)
    return out


def timed(fn, reps):
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        x = fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
        del x
    return statistics.median(times)


def first_call_ms():
    """Wall time of the kernel's first call in this process (a JIT compile, or a load from
    TRITON_CACHE_DIR), context made beforehand."""
    torch.zeros(1, device="cuda")
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    triton_normal((1024, 1024), torch.bfloat16, 1)
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) * 1e3


def task_inputs(path, reps):
    """(wall ms, event ms): medians of a task's make_inputs calls after two warm ones."""
    spec = importlib.util.spec_from_file_location("probe_task", path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    kept, walls, events = None, [], []
    for k in range(reps + 2):
        kept = None                      # the runner's release: the last call's inputs go first
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        t0 = time.perf_counter()
        a.record()
        kept = I.make_inputs(m.get_inputs, 1000 + k, "cuda")
        b.record()
        torch.cuda.synchronize()
        walls.append((time.perf_counter() - t0) * 1e3)
        events.append(a.elapsed_time(b))
    del kept
    torch.cuda.empty_cache()
    return statistics.median(walls[2:]), statistics.median(events[2:])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--first-call", action="store_true", help="print the first call's ms and stop")
    ap.add_argument("tasks", nargs="*", help="task files: their get_inputs per call, and nothing else")
    a = ap.parse_args()
    if a.tasks:
        for path in a.tasks:
            wall, ev = task_inputs(path, a.reps)
            print(f"{os.path.basename(path)[:40]:40} make_inputs {wall:7.2f} ms wall, {ev:7.2f} ms events")
        return
    if a.first_call:
        print(f"{first_call_ms():.1f}")
        return
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, TRITON_CACHE_DIR=cache)
        cmd = [sys.executable, __file__, "--first-call"]
        cold = subprocess.run(cmd, env=env, capture_output=True, text=True).stdout.strip()
        warm = subprocess.run(cmd, env=env, capture_output=True, text=True).stdout.strip()
        print(f"the Triton kernel's first call in a fresh process: {cold} ms compiling, {warm} ms from the cache")
    cases = [("1 GiB bf16 (heavy/1)", (16384, 32768), torch.bfloat16),
             ("2 GiB bf16 (heavy/3)", (131072, 8192), torch.bfloat16),
             ("14 GiB bf16 (heavy/7)", (7168, 1 << 20), torch.bfloat16),
             ("2 GiB fp32", (16384, 32768), torch.float32)]
    print(f"{'case':24} {'randn':>8} {'rand':>8} {'triton10':>9} {'triton7':>8} {'mul_':>7}  ms; G elements/s of randn, triton10")
    for name, shape, dtype in cases:
        n = shape[0] * shape[1]
        t_randn = timed(lambda: torch.randn(shape, dtype=dtype, device="cuda"), a.reps)
        t_rand = timed(lambda: torch.rand(shape, dtype=dtype, device="cuda"), a.reps)
        t_mul = timed(lambda: torch.empty(shape, dtype=dtype, device="cuda").mul_(1.5), a.reps)
        t_tri = timed(lambda: triton_normal(shape, dtype, 1234, 10), a.reps)
        t_tri7 = timed(lambda: triton_normal(shape, dtype, 1234, 7), a.reps)
        x = triton_normal(shape, dtype, 1234).float()
        m, s = x.mean().item(), x.std().item()
        same = torch.equal(triton_normal(shape, dtype, 1234), triton_normal(shape, dtype, 1234))
        del x
        print(f"{name:24} {t_randn:8.2f} {t_rand:8.2f} {t_tri:9.2f} {t_tri7:8.2f} {t_mul:7.2f}  "
              f"{n / t_randn / 1e6:6.0f}, {n / t_tri / 1e6:6.0f}; triton mean {m:+.4f} std {s:.4f} repeatable {same}")
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
