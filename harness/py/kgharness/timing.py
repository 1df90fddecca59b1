"""GPU timing: events around each call, fresh inputs and an L2 flush per iteration.

Only used in GPU mode; importable (and inert) on CPU. Every function here that
calls the candidate gets a `window` (guards.Guard.window) so the candidate runs
under the audit hook and launch counter, with the checks after the end event.
The CUDA callables are captured at import, before any candidate exists.
"""

import random

import torch

from .guards import T

_Event = getattr(torch.cuda, "Event", None)
_record = getattr(_Event, "record", None)
_elapsed = getattr(_Event, "elapsed_time", None)


def _sync():
    T.cuda_sync()


def stats(times_ms):
    """Summary of per-iteration times (PROTOCOL.md runtime object)."""
    xs = sorted(times_ms)
    n = len(xs)

    def pct(p):
        k = (n - 1) * p
        lo = int(k)
        hi = min(lo + 1, n - 1)
        return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)
    p10, p90 = pct(0.10), pct(0.90)
    return {"median_ms": pct(0.5), "p10_ms": p10, "p90_ms": p90, "min_ms": xs[0], "max_ms": xs[-1],
            "mean_ms": sum(xs) / n, "spread": (p90 / p10) if p10 > 0 else None, "iterations": n}


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


def bandwidth_bytes_per_ms(device):
    """Device copy bandwidth (bytes read + written per ms), median of a few 256 MiB copies."""
    n = (256 << 20) // 4
    src = torch.empty(n, dtype=torch.float32, device=device).fill_(1.0)
    dst = torch.empty_like(src)
    dst.copy_(src)
    _sync()
    times = []
    for _ in range(5):
        s, e = _Event(enable_timing=True), _Event(enable_timing=True)
        _record(s)
        dst.copy_(src)
        _record(e)
        _sync()
        times.append(_elapsed(s, e))
    del src, dst
    best = stats(times)["median_ms"]
    return (2 * n * 4) / best if best > 0 else float("inf")


def time_model(fn, inputs_for, *, window=None, flusher, budget_ms=1000.0, min_iters=10,
               max_iters=500, rng=None, recheck=None):
    """Time fn(*inputs) per iteration with CUDA events.

    inputs_for(k) makes fresh inputs for iteration k (outside the timed region).
    recheck(k, inputs_clone, out) -> flag or None is called at 2-3 random iterations
    after the device sync. Returns (stats, observations) where observations holds
    'side_stream' evidence and recheck flags.
    """
    rng = rng or random.Random()
    window = window or _null_window
    obs = {"flags": [], "gaps_ms": []}
    for k in range(rng.randint(2, 4)):           # warm-up; unpredictable count
        inp = inputs_for(-1 - k)
        with window():
            fn(*inp)
        _sync()
    t0 = T.perf_counter()
    inp = inputs_for(10 ** 6)
    flusher()
    with window():
        fn(*inp)
    _sync()
    est_ms = max((T.perf_counter() - t0) * 1e3, 1e-3)
    n = int(min(max(budget_ms / est_ms, min_iters), max_iters))
    checks = set(rng.sample(range(n), min(n, rng.randint(2, 3)))) if recheck else set()
    times, start_wall = [], T.perf_counter()
    for k in range(n):
        inp = inputs_for(k)
        saved = [x.clone() if isinstance(x, torch.Tensor) else x for x in inp] if k in checks else None
        flusher()
        s, e = _Event(enable_timing=True), _Event(enable_timing=True)
        _sync()
        with window():
            w0 = T.perf_counter()
            _record(s)
            out = fn(*inp)
            _record(e)
            w1 = T.perf_counter()
        w2 = T.perf_counter()
        _sync()
        w3 = T.perf_counter()
        ev = _elapsed(s, e)
        times.append(ev)
        obs["gaps_ms"].append(((w1 - w0) + (w3 - w2)) * 1e3 - ev)
        if k in checks:
            flag = recheck(k, saved, out)
            if flag:
                obs["flags"].append(flag)
        del out
        if k + 1 >= min_iters and (T.perf_counter() - start_wall) * 1e3 > 2 * budget_ms:
            break
    st = stats(times)
    gap = stats(obs["gaps_ms"])["median_ms"]
    # Work that escaped the current stream shows as host wall time (call + full device
    # sync) far above the event time. Launch overhead and sync latency are tens of us,
    # so only a large absolute and relative gap counts.
    if gap > 1.0 and gap > 2.0 * st["median_ms"]:
        obs["flags"].append("side_stream")
    return st, obs


class _NullWindow:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _null_window():
    return _NullWindow()


def coverage(fn, inputs, window):
    """Share of the call's GPU time spent in the candidate's own Triton kernels.

    The launch counter (guards) brackets each own launch with events on its stream;
    the whole call is bracketed the same way. Inductor-generated or library kernels
    fall in the gaps, so torch.compile passthrough scores low."""
    from .guards import S
    s, e = _Event(enable_timing=True), _Event(enable_timing=True)
    _sync()
    S.cov = []
    try:
        _record(s)
        with window():
            fn(*inputs)
        _record(e)
        _sync()
        total = _elapsed(s, e)
        own = sum(_elapsed(a, b) for a, b in S.cov)
    finally:
        S.cov = None
    return min(1.0, own / total) if total > 0 else None
