"""Timing primitives: one timed call in a runner, and the statistics the judge keeps.

A runner times its own calls (CUDA events on a GPU, the host clock in CPU mode); the
judge does not trust those numbers alone. It measures each call's wall time on its own
clock and compares (kgharness.judge.window). The CUDA callables are captured at import,
before any candidate exists, but a candidate shares the runner's process and can
replace anything here: that is why the judge cross-checks.
"""

import random

import torch

from .snapshot import T

_Event = getattr(torch.cuda, "Event", None)
_record = getattr(_Event, "record", None)
_elapsed = getattr(_Event, "elapsed_time", None)


def _sync():
    T.cuda_sync()


def stats(times_ms):
    """Summary of per-iteration times (docs/protocol.md runtime object)."""
    xs = sorted(times_ms)
    n = len(xs)
    p10, p90 = quantile(xs, 0.10), quantile(xs, 0.90)
    return {"median_ms": quantile(xs, 0.5), "p10_ms": p10, "p90_ms": p90, "min_ms": xs[0], "max_ms": xs[-1],
            "mean_ms": sum(xs) / n, "spread": (p90 / p10) if p10 > 0 else None, "iterations": n}


def quantile(xs, p):
    """The p-quantile of sorted xs, linearly interpolated between order statistics."""
    k = (len(xs) - 1) * p
    lo = int(k)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def median(xs):
    return stats(xs)["median_ms"]


class Flusher:
    """Writes a buffer of 2x the L2 size so no iteration starts with a warm cache."""

    def __init__(self, device):
        try:
            l2 = int(torch.cuda.get_device_properties(0).L2_cache_size) or (128 << 20)
        except Exception:
            l2 = 128 << 20
        self.buf = torch.empty(max(2 * l2, 64 << 20) // 4, dtype=torch.int32, device=device)

    def __call__(self):
        self.buf.fill_(random.getrandbits(16))


# A spin kernel queued ahead of each timed call: while the GPU spins, the host enqueues
# the flush, the start event and the call's launches, so the events measure GPU work and
# not Python launch latency (which swings with CPU load from other children's compiles).
# The judge sets its length per call (kgharness.judge.window): a call whose launches take the
# host longer than the spin leaves the GPU idle inside the events.
HEAD_START_CYCLES = 600_000      # ~0.3 ms at the H200's 1.98 GHz
CYCLES_PER_MS = 1_980_000
_spin = getattr(torch.cuda, "_sleep", None)


def timed_call(fn, inputs, window, flusher, gpu, head_ms=None):
    """One timed call of fn(*inputs): (milliseconds, output, enqueue milliseconds). GPU:
    CUDA events around the call after a spin head start of head_ms and an L2 flush, the
    device synchronised before and after; enqueue is the host's time from the spin's
    launch to the end event's. CPU: the host clock around the call (enqueue None)."""
    if not gpu:
        with window(), torch.no_grad():
            t0 = T.perf_counter()
            out = fn(*inputs)
            t1 = T.perf_counter()
        return (t1 - t0) * 1e3, out, None
    s, e = _Event(enable_timing=True), _Event(enable_timing=True)
    _sync()
    q0 = T.perf_counter()
    if _spin is not None:
        _spin(HEAD_START_CYCLES if head_ms is None else int(head_ms * CYCLES_PER_MS))
    flusher()
    _record(s)
    with window(), torch.no_grad():
        out = fn(*inputs)
        _record(e)
    q1 = T.perf_counter()
    _sync()
    return _elapsed(s, e), out, (q1 - q0) * 1e3


def bandwidth_bytes_per_ms(device):
    """Device memory bandwidth (bytes per ms) for the too_fast floor: the faster of a copy
    (read + write) and a read-only sum, medians of a few 256 MiB runs. Measured by the
    judge, in its own process.

    The floor must hold for kernels that mostly read: on the H200 an honest row-std
    kernel read 512 MiB at 4.2 TB/s, well above the 3.3 TB/s a copy reaches, and a
    copy-only floor flagged it.
    """
    n = (256 << 20) // 4
    src = torch.empty(n, dtype=torch.float32, device=device).fill_(1.0)
    dst = torch.empty_like(src)
    out = torch.empty((), dtype=torch.float32, device=device)
    copy = lambda: dst.copy_(src)  # noqa: E731
    read = lambda: torch.sum(src, dim=0, out=out)  # noqa: E731
    best = {}
    for name, fn in (("copy", copy), ("read", read)):
        fn()
        _sync()
        times = []
        for _ in range(5):
            s, e = _Event(enable_timing=True), _Event(enable_timing=True)
            _record(s)
            fn()
            _record(e)
            _sync()
            times.append(_elapsed(s, e))
        best[name] = median(times)
    del src, dst, out
    rates = [b / t for b, t in ((2 * n * 4, best["copy"]), (n * 4, best["read"])) if t > 0]
    return max(rates) if rates else float("inf")


class _NullWindow:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _null_window(count=True):
    return _NullWindow()


def coverage(fn, inputs, window):
    """Share of the call's GPU time spent in the candidate's own Triton kernels.

    The launch counter (guards) brackets each own launch with events on its stream;
    the whole call is bracketed the same way. Inductor-generated or library kernels
    fall in the gaps, so torch.compile passthrough scores low. A detector: it runs in the
    candidate's process."""
    from .guards import S
    s, e = _Event(enable_timing=True), _Event(enable_timing=True)
    _sync()
    S.cov = []
    try:
        if _spin is not None:
            _spin(4 * HEAD_START_CYCLES)   # queue the whole call before the GPU reaches s
        _record(s)
        with window():   # its exit runs the guard's checks: host time, not the call's
            fn(*inputs)
            _record(e)
        _sync()
        total = _elapsed(s, e)
        own = sum(_elapsed(a, b) for a, b in S.cov)
    finally:
        S.cov = None
    return min(1.0, own / total) if total > 0 else None
