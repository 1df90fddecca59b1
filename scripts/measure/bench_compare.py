"""The judge's output comparison on a GPU: kgharness.comparekernel (one pass) against the
torch path (kgharness.correctness.float_stats), on a 1 GiB bf16 and a 512 MiB fp32 output
with a few wrong elements. Prints each one's median time and whether their figures agree.

usage (on a GPU host, from the repository root): python3 scripts/measure/bench_compare.py
"""
import statistics
import sys
import time

import torch

sys.path.insert(0, "harness/py")
from kgharness import comparekernel, correctness  # noqa: E402


def timed(fn, reps=7):
    fn()
    out = []
    for _ in range(reps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        got = fn()
        out.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(out), got


for dtype, n in ((torch.bfloat16, 1 << 29), (torch.float32, 1 << 27)):
    ref = torch.randn(n, device="cuda", dtype=dtype)
    out = ref.clone()
    out[12345] += 1.0
    out[n - 7] = float("nan")
    tol = correctness.tolerance([ref], {})
    work = correctness.work_dtype(dtype)
    t_fast, fast = timed(lambda: comparekernel.stats(out, ref, tol["atol"], tol["rtol"], work))
    t_slow, slow = timed(lambda: correctness.float_stats(out, ref, tol))
    same = fast[:2] == slow[:2] and fast[5] == slow[5]
    print(f"{str(dtype):15s} {n * ref.element_size() / 2**20:6.0f} MiB  kernel {t_fast:7.2f} ms  "
          f"torch {t_slow:7.2f} ms  x{t_slow / t_fast:5.1f}  counts+worst same: {same}  {fast[:2]} {slow[:2]}")
