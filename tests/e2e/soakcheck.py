"""The soak's flat-line rule and its report, pure Python so they can be tested on synthetic
series (test_soak.py does both).

The rule, per server lifetime (the samples of one `kernelgate serve` process, start to stop):
split the lifetime into quarters by time; the first is warm-up and not judged (pools fill,
the first export sets the memory high-water mark). A figure leaks when even the lowest of
its samples in the last quarter is above the median of the second quarter by more than REL
of it plus the figure's absolute slack:

    min(Q4) > median(Q2) * (1 + REL) + SLACK[figure]

Transients only go up (an export's memory peak, requests in flight), so the last quarter's
floor ignores them while a leak raises it; the second quarter's median ignores them too.
A relative term, because the Go runtime's footprint wanders in proportion; an absolute
slack, because small counts (23 open files) move by whole units. RSS is allowed to creep:
the result cache and the sink's dedup set grow by design until their 24 h TTL (about
1 MiB a minute under the soak's load). A lifetime shorter than MIN_LIFETIME_S, or with
fewer than MIN_SAMPLES samples, is reported but not judged. The Theil-Sen slope over the
judged part is reported per minute, for reading, and decides nothing.
"""

import statistics

FIGURES = ("rss_mib", "goroutines", "open_fds")
REL = 0.2
SLACK = {"rss_mib": 48.0, "goroutines": 25.0, "open_fds": 12.0}
MIN_LIFETIME_S = 30.0
MIN_SAMPLES = 12


def slope_per_min(points):
    """Theil-Sen slope of (t_s, value) points, per minute; None for fewer than two."""
    pairs = [(b[1] - a[1]) / (b[0] - a[0]) for i, a in enumerate(points) for b in points[i + 1:] if b[0] > a[0]]
    return statistics.median(pairs) * 60 if pairs else None


def judge_figure(points, figure):
    """The verdict on one figure of one lifetime: points are (t_s, value) in time order."""
    points = [(t, v) for t, v in points if v is not None]
    out = {"figure": figure, "samples": len(points)}
    if not points:
        return {**out, "judged": False, "why": "no samples"}
    t0, t1 = points[0][0], points[-1][0]
    out.update(first=points[0][1], last=points[-1][1], max=max(v for _, v in points))
    span = t1 - t0
    if span < MIN_LIFETIME_S or len(points) < MIN_SAMPLES:
        return {**out, "judged": False, "why": f"too short ({span:.0f} s, {len(points)} samples)"}
    q = span / 4
    q2 = [v for t, v in points if t0 + q <= t < t0 + 2 * q]
    q4 = [v for t, v in points if t >= t0 + 3 * q]
    if len(q2) < 2 or len(q4) < 2:
        return {**out, "judged": False, "why": "too few samples in a quarter"}
    m2, floor4 = statistics.median(q2), min(q4)
    limit = m2 * (1 + REL) + SLACK[figure]
    return {**out, "judged": True, "q2_median": m2, "q4_min": floor4, "limit": round(limit, 2),
            "slope_per_min": slope_per_min([(t, v) for t, v in points if t >= t0 + q]),
            "leak": floor4 > limit}


def judge(samples):
    """Verdicts for every lifetime and figure of samples (dicts with t_s, life and FIGURES)."""
    lives = sorted({s["life"] for s in samples})
    out = []
    for life in lives:
        mine = [s for s in samples if s["life"] == life]
        for f in FIGURES:
            out.append({"life": life, **judge_figure([(s["t_s"], s.get(f)) for s in mine], f)})
    return out


def leaks(verdicts):
    return [v for v in verdicts if v.get("leak")]


def _fmt(x):
    if x is None:
        return "-"
    return f"{x:.1f}" if isinstance(x, float) and x != int(x) else f"{x:.0f}"


def table(verdicts, samples):
    """A short text table: per lifetime and figure, first → last, the second quarter's
    median, the last quarter's floor, the limit, the slope and the verdict; then the store's and the Parquet log's size."""
    rows = [("life", "figure", "first", "last", "max", "Q2 med", "Q4 min", "limit", "slope/min", "verdict")]
    for v in verdicts:
        verdict = ("LEAK" if v["leak"] else "flat") if v["judged"] else f"not judged: {v['why']}"
        rows.append((str(v["life"]), v["figure"], _fmt(v.get("first")), _fmt(v.get("last")), _fmt(v.get("max")),
                     _fmt(v.get("q2_median")), _fmt(v.get("q4_min")), _fmt(v.get("limit")),
                     _fmt(v.get("slope_per_min")), verdict))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    if samples:
        a, b = samples[0], samples[-1]
        for key, name in (("store_mib", "store (nats)"), ("parquet_mib", "Parquet log")):
            lines.append(f"{name}: {_fmt(a.get(key))} -> {_fmt(b.get(key))} MiB over {b['t_s'] - a['t_s']:.0f} s")
    return "\n".join(lines)
