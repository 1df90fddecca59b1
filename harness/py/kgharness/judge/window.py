"""The timing window: reference and candidate timed together, on their clocks and the judge's.

Inside the GPU's exclusive window (the zygote has stopped every other evaluation on
this GPU; the judge waits until their queued GPU work has drained), the judge:

1. measures the device bandwidth (the `too_fast` floor) on its own context;
2. times the reference alone, the candidate stopped (SIGSTOP): the "before" figure,
   which no candidate code can slow down;
3. times reference and candidate interleaved, call by call, same fresh seed for both,
   order alternating, each runner stopped while the other runs: drift on the host or
   the GPU hits both alike.

Every timed call is one request: the runner makes the call's fresh inputs and times
itself (CUDA events; the host clock in CPU mode), and the judge times the request on its
own clock. The judge's wall time minus the runner's time is the runner's overhead
(messages, making the inputs, sync, spin head start, flush, the copy into the buffer);
the same harness code runs on both sides, so the candidate's overhead must match the
reference's. A candidate whose timer was forged, or whose work ran outside its events,
shows the difference. After each candidate call the judge checksums its buffer, and
checks the checksum again before the candidate's next call; and it compares every timed
output with the reference's output for the same seed.
"""

import contextlib
import time

from .. import exchange, timing
from . import quiet
from .timedcalls import TimedCalls

# The candidate's overhead may exceed the reference's by at least ABS_LIMIT_MS, or
# REL_LIMIT of the candidate's median time, or MAD_LIMIT median absolute deviations of
# the reference's overhead. Measured on an H200 (120 honest level2 evaluations at
# concurrency 4-16): the paired excess of honest kernels reached 0.14 ms in 3 of them,
# so 0.1 ms flagged honest kernels; 0.25 ms leaves room. A forger can therefore hide at
# most 0.25 ms or a quarter of its time per call (the too_fast floor bounds the rest).
# On a CPU (the interpreter, host clocks, a shared machine) the window only has to
# catch gross forgeries, so its limits are loose.
ABS_LIMIT_MS = {"gpu": 0.25, "cpu_interpreter": 2.0}
REL_LIMIT = {"gpu": 0.25, "cpu_interpreter": 0.5}
MAD_LIMIT = 4.0           # ... or this many median absolute deviations of the reference's overhead
REF_DRIFT = 1.05          # the interleaved reference slower than "before" by more: use "before"
# No call that launches a kernel and writes its outputs takes less on a GPU's events: the
# floor a forged timer hits first on tasks too small for the judge's clock to see (a
# tiny kernel is all launch latency; docs/threat-model.md, known limits).
MIN_CALL_MS = 0.002
# A candidate this many times slower than the reference over SLOW_CALLS of its calls
# (its warm-ups counted, its timed calls that slow too) is timed no further: its speedup
# is under the 0.1x floor of the clipped rewards (kevin's, not clipped, moves by less than
# 0.1), and a sleeping kernel held the whole GPU's window 3.4 s (median, heavy suite,
# H200) at min_iters pairs; with three pairs after its warm-ups, still 1.2-1.7 s (2 x 16
# and 7 x 16, 2026-12-02). GPU only: the interpreter is always that much slower than torch.
SLOW_RATIO = 10.0
SLOW_CALLS = 3
# A phase plans max(min_iters, PLANNED_CALLS, what the budget buys) calls, but stops from
# min_iters on once its medians are precise: the estimated standard error of the
# speedup (both medians, from their interquartile ranges) under PRECISION, and the
# candidate's overhead well inside the wall check's limit (under SETTLED_EXCESS of it).
# Heavy calls (0.7-2.7 ms, 0.0-0.1% apart on the H200) are settled long before the old
# fixed ten pairs, and every call of a window stops every other evaluation on the GPU.
# A close or noisy case still gets its whole plan. SETTLED_EXCESS bounds a forger's luck,
# not what it can hide (the wall check's limit does that): one over the limit stops early
# only when its estimate falls 0.2 of the limit plus two standard errors below the truth.
# Simulated with normal per-call noise up to 0.4 of the limit, a forger at the limit
# stops early in 5 pairs at most 4% of the time (0.15% at 0.5), one at 1.2x it 1%; its
# whole plan, then a second one on `forge`, lets one at the limit through 3 times in 4
# anyway. Honest kernels gain nothing from a longer window: at 0.5, 44 of 98 heavy
# windows ran more than five pairs (H200, 2026-12-03).
PLANNED_CALLS = 10
PRECISION = 0.005
SETTLED_EXCESS = 0.8
# Untimed calls before a side's timed ones in a window, a random count. The pairs' medians
# drop a slow first call anyway; 2-4 were 27% of a level2 window's calls (H200).
WARM_CALLS = (1, 2)


class Window:
    def __init__(self, judge, trials):
        self.judge, self.trials = judge, trials
        self.reference, self.candidate = judge.reference, judge.candidate
        o = judge.opts
        self.budget, self.min_iters, self.max_iters = o["timing_budget_ms"], o["min_iters"], o["max_iters"]
        self.gpu = judge.gpu
        self.ops = judge.ops
        # Where the window's time goes (stage_ms window_*): its length bounds a GPU's
        # throughput, since every other evaluation on the GPU is stopped meanwhile.
        # open: from asking for the lock to the window's first step (the wait, the grant, the
        # judge service's gate); prelude: stopping the candidate, the drain, the bandwidth.
        self.spent = {"go": 0.0, "check": 0.0, "calls": 0, "switch": 0.0, "verify": 0.0,
                      "verifies": 0}
        self.calls = TimedCalls(judge, trials, self.spent, self.ops, self.gpu)

    def run(self):
        j, v = self.judge, self.judge.verdict
        asked = time.perf_counter()
        with j.ctx.timing_lock(), self.lent(), self.held(), quiet.no_gc():
            opened = time.perf_counter()
            if getattr(j.ctx, "shared_gpu", False):
                v["warnings"].append("another kernelgate process on this GPU did not stop its "
                                     "evaluations for this timing window: its work may be in the timings")
            # The candidate is stopped before the drain: work it queued before it stopped
            # must have run out before the reference is timed alone.
            self.candidate.stop()
            try:
                v["stage_ms"]["drain"] = self.drain()
                self.bandwidth = self.ops.bandwidth()
                t0 = time.perf_counter()
                self.spent["prelude"] = (t0 - opened) * 1e3      # stop, drain, bandwidth
                before = self.shared_before()
                if before is None:
                    before, _ = self.alone(self.reference, self.trials.ref_buf, 0.5)
                    if j.sharing.enabled:
                        self.ops.share_before(j.sharing.key, before)
                else:
                    self.calls.call(self.reference, self.trials.ref_buf, j.rng.randrange(1 << 30))   # warm it
            finally:
                self.candidate.cont()
            t1 = time.perf_counter()
            pairs = self.interleave()
            excess = self.wall_excess(pairs)
            if excess is not None:
                # Over the wall check's limit once: measured again before a verdict of
                # forge. A forger is over it in every plan; an honest kernel was over it
                # once in 100 level2 evaluations (20_gemm_scale_glu, 0.293 ms against
                # 0.25, 10 pairs, call-by-call excess -0.04 to 0.33 ms: H200, 2026-12-02).
                # The second plan's pairs alone decide, so what a forger can hide per call
                # is bounded as before.
                self.spent["recheck_excess_ms"] = excess
                pairs = self.interleave()
            t2 = time.perf_counter()
            self.recheck_bandwidth(pairs)
        self.spent["open"] = (opened - asked) * 1e3               # the lock's wait and grant, the gate
        v["stage_ms"].update(window_before=round((t1 - t0) * 1e3, 3), window_pairs=round((t2 - t1) * 1e3, 3),
                             **{f"window_{k}": round(x, 3) for k, x in self.spent.items()})
        self.conclude(before, pairs)

    @contextlib.contextmanager
    def lent(self):
        """A hosted evaluation's reference is the task's host (kgharness.zygote.refhosts), lent for
        this window only."""
        if not self.judge.sharing.hosted:
            yield
            return
        self.reference = self.judge.sharing.borrow_host(self.trials)
        yield
        self.judge.sharing.return_host(self.trials)

    def shared_before(self):
        """The reference timed alone by an earlier evaluation of this task on this GPU (a
        fresh reference runner, the GPU quiet, kgharness.judge.refstore), while recent: this
        window then times only the pairs. Asked of the store now when the entry this
        evaluation took had none: an evaluation that started with its group's first, before
        any window of the task had closed, timed the reference alone again (39 of 98
        heavy windows, 60-140 ms each against 9-17 ms; H200, 2026-12-03)."""
        j, sharing = self.judge, self.judge.sharing
        sh = sharing.entry
        before = sh.get("before") if sh is not None else None
        if before is None and sharing.enabled and sharing.key:
            before = self.ops.before(sharing.key).get("before")
        if isinstance(before, dict) and isinstance(before.get("median_ms"), (int, float)) and before["median_ms"] > 0:
            j.verdict["stage_ms"]["window_before_shared"] = 1.0
            return before
        return None

    def reference_only(self):
        """A task check's figure: the reference alone, a full budget."""
        with self.judge.ctx.timing_lock(), self.held(), quiet.no_gc():
            self.judge.verdict["stage_ms"]["drain"] = self.drain()
            self.judge.verdict["ref_runtime"], _ = self.alone(self.reference, self.trials.ref_buf, 1.0)

    @contextlib.contextmanager
    def held(self):
        """The judge service runs no other judge's request while this window is open, and
        both runners run on one CPU."""
        g0 = time.perf_counter()
        self.ops.window(True)
        self.spent["gate"] = (time.perf_counter() - g0) * 1e3
        pinned = quiet.pin((self.reference, self.candidate))
        try:
            yield
        finally:
            c0 = time.perf_counter()
            quiet.unpin(pinned)
            self.ops.window(False)
            self.spent["close"] = (time.perf_counter() - c0) * 1e3

    def drain(self):
        """Wait until GPU work queued by the evaluations the zygote just stopped has run out."""
        ms, quiet = self.ops.drain()
        if not quiet:
            self.judge.verdict["warnings"].append("the GPU was still busy with other work when timing started")
        return ms

    def warm(self, r, buf):
        """r's untimed calls: their times on r's own clock."""
        n = self.judge.rng.randint(*WARM_CALLS)
        return [self.calls.call(r, buf, self.judge.rng.randrange(1 << 30))[0] for _ in range(n)]

    def alone(self, r, buf, share):
        """Time r alone (the other runner is stopped): (stats, overheads)."""
        self.warm(r, buf)
        c0 = time.perf_counter()
        ms, wall = self.calls.call(r, buf, self.judge.rng.randrange(1 << 30))
        n = self.count(share * self.budget, (time.perf_counter() - c0) * 1e3)
        times, over = [ms], [wall - ms]
        t_end = time.monotonic() + 3 * share * self.budget / 1e3
        while len(times) < n and (len(times) < self.min_iters or
                                  (time.monotonic() < t_end and _rel_error(times) > PRECISION)):
            ms, wall = self.calls.call(r, buf, self.judge.rng.randrange(1 << 30))
            times.append(ms)
            over.append(wall - ms)
        return timing.stats(times), over

    def count(self, budget_ms, per_call_ms):
        """Calls that fit the budget, each costing what one whole call cost: checksums,
        inputs and stopping the other runner included. Counting only the timed request
        and its inputs, level2 windows held the GPU 205 ms (median, H200) for a 125 ms
        budget, every other evaluation frozen meanwhile."""
        floor = max(self.min_iters, PLANNED_CALLS)
        return int(min(max(budget_ms / max(per_call_ms, 1e-3), floor), self.max_iters))

    def interleave(self):
        j = self.judge
        warm = self.warm(self.candidate, self.trials.cand_buf)
        c0 = time.perf_counter()
        got = self.calls.paired(self.reference, self.candidate, j.rng.randrange(1 << 30))
        n = self.count(2 * self.budget, (time.perf_counter() - c0) * 1e3)
        # Every timed output is compared with the reference's for the same seed. With a
        # random handful compared, a candidate that returned garbage fast on every other
        # call got through when the handful fell on its honest calls (2 of 30 CPU runs
        # of hacks/phase_detect_alternate.py at a01bfca), its fast half in the median.
        self.calls.verify(0)
        rows = [got]
        t_end = time.monotonic() + 6 * self.budget / 1e3
        k = 1
        while k < n and not (self.gpu and self.hopeless(rows, warm)):
            seed = j.rng.randrange(1 << 30)
            order = (self.reference, self.candidate) if k % 2 == 0 else (self.candidate, self.reference)
            rows.append(self.calls.paired(*order, seed))
            self.calls.verify(k)
            k += 1
            if k >= self.min_iters and (time.monotonic() > t_end or self.settled(rows)):
                break
        self.calls.check_pending(self.candidate)
        return rows

    def settled(self, rows):
        """The pairs so far measure the speedup to PRECISION, and the wall check's figure
        (the two sides' median overheads apart) is inside SETTLED_EXCESS of its limit by two
        standard errors of the call-by-call excess: a window that stops here passes the
        wall check by construction, and only a whole plan can fail it. With the median
        alone, an honest level2 kernel whose overheads swung 1.2 ms from call to call
        stopped at 5 pairs and failed it (H200, 2026-12-02)."""
        tr, tc, oh_r, oh_c = _columns(rows)
        if (_rel_error(tr) ** 2 + _rel_error(tc) ** 2) ** 0.5 > PRECISION:
            return False
        mr, mc, limit = self.overheads(tc, oh_r, oh_c)
        return mc - mr + 2 * _std_error([c - r for r, c in zip(oh_r, oh_c)]) <= SETTLED_EXCESS * limit

    @staticmethod
    def hopeless(rows, warm=()):
        """SLOW_RATIO times slower than the reference: the timed calls' median, and the
        median of SLOW_CALLS or more calls with the warm-ups. A slow warm-up alone (a cold
        first call) is not enough."""
        tr, tc, _, _ = _columns(rows)
        calls = list(warm) + tc
        if len(calls) < SLOW_CALLS or not tc:
            return False
        floor = SLOW_RATIO * timing.median(tr)
        return timing.median(tc) >= floor and timing.median(calls) >= floor

    def conclude(self, before, rows):
        j, v = self.judge, self.judge.verdict
        tr, tc, oh_r, oh_c = _columns(rows)
        after, cand = timing.stats(tr), timing.stats(tc)
        v["ref_runtime_before"], v["ref_runtime_after"], v["runtime"] = before, after, cand
        v["ref_runtime"] = after
        if after["median_ms"] > REF_DRIFT * before["median_ms"]:
            v["ref_runtime"] = before
            v["warnings"].append(f"reference slowed from {before['median_ms']:.4g} ms alone to "
                                 f"{after['median_ms']:.4g} ms beside the candidate")
        self.wall_check(tc, oh_r, oh_c)
        excess = sorted(c - r for r, c in zip(oh_r, oh_c))   # paired, call by call
        v["wall_check"].update(pairs=len(excess), excess_p10_ms=round(timing.stats(excess)["p10_ms"], 4),
                               excess_p90_ms=round(timing.stats(excess)["p90_ms"], 4))
        v["speedup"] = v["ref_runtime"]["median_ms"] / cand["median_ms"] if cand["median_ms"] > 0 else None
        if self.gpu:
            floor = self.floor_ms()
            if cand["median_ms"] < floor:
                j.flag("too_fast", f"median {cand['median_ms']:.4g} ms is below the floor {floor:.4g} ms "
                       f"(its outputs written once at the measured bandwidth, or one kernel launch)")

    def floor_ms(self):
        """The too_fast floor: the task's least traffic (its outputs written once, or what
        it declares it must read) at 80% of the measured bandwidth (honest kernels that
        only read reach ~95% of it: level1 reductions on the H200), or one launch."""
        _, out_bytes = exchange.layout(self.trials.spec)
        return max(0.8 * max(int(self.judge.min_bytes or 0), out_bytes) / self.bandwidth, MIN_CALL_MS)

    def recheck_bandwidth(self, rows):
        """A candidate under the floor has the bandwidth measured again, twice at most and
        still inside the window, before conclude flags it: a measurement that other work
        slowed down must not decide a verdict (bufferops.Local.bandwidth keeps the most)."""
        if not self.gpu or not rows:
            return
        cand_ms = timing.stats(_columns(rows)[1])["median_ms"]
        for k in range(1, 3):
            if cand_ms >= self.floor_ms():
                return
            self.bandwidth = self.ops.bandwidth(again=True)
            self.judge.verdict["stage_ms"]["window_bandwidth_again"] = float(k)

    def limit(self, oh_r, cand_ms):
        """How much more per call the candidate's overhead may be than the reference's."""
        mr = timing.median(oh_r)
        mad = timing.median([abs(x - mr) for x in oh_r])
        mode = self.judge.ctx.mode
        return max(ABS_LIMIT_MS[mode], REL_LIMIT[mode] * cand_ms, MAD_LIMIT * mad)

    def overheads(self, tc, oh_r, oh_c):
        """The reference's and the candidate's median overheads, and the limit on how far
        the candidate's may exceed the reference's (columns of _columns)."""
        return timing.median(oh_r), timing.median(oh_c), self.limit(oh_r, timing.median(tc))

    def wall_excess(self, rows):
        """How far the candidate's median overhead exceeds the reference's when that is
        over the limit, else None."""
        if not rows:
            return None
        _, tc, oh_r, oh_c = _columns(rows)
        mr, mc, limit = self.overheads(tc, oh_r, oh_c)
        return round(mc - mr, 4) if mc - mr > limit else None

    def wall_check(self, tc, oh_r, oh_c):
        mr, mc, limit = self.overheads(tc, oh_r, oh_c)
        self.judge.verdict["wall_check"] = {"ref_overhead_ms": round(mr, 4), "cand_overhead_ms": round(mc, 4),
                                  "limit_ms": round(limit, 4)}
        if self.calls.head_ms is not None:
            names = {"reference": "ref_enqueue_ms", "candidate": "cand_enqueue_ms"}
            self.judge.verdict["wall_check"].update(
                head_ms=round(self.calls.head_ms, 3),
                **{names[role]: round(timing.median(v), 4) for role, v in self.calls.enqueue.items() if v})
        if mc - mr > limit:
            self.judge.flag("forge", f"the judge's clock saw {mc - mr:.3g} ms more per call than the "
                        f"candidate's own timer: its work ran where that timer could not see it, or "
                        f"the timer was forged")


def _columns(rows):
    """The pairs' reference times, candidate times, and each side's overheads (the judge's
    wall time less the runner's own), call by call."""
    tr = [row["reference"][0] for row in rows]
    tc = [row["candidate"][0] for row in rows]
    oh_r = [row["reference"][1] - row["reference"][0] for row in rows]
    oh_c = [row["candidate"][1] - row["candidate"][0] for row in rows]
    return tr, tc, oh_r, oh_c


def _std_error(xs):
    """The standard error of the median of xs: 1.2533 sigma / sqrt(n), sigma from the
    interquartile range (1.349 sigma for a normal); inf below three values. From the
    p10-p90 spread instead, one spike in five pairs held a window to its whole plan: in
    7 x 16 on an H200 (2026-12-03) 44 of 98 heavy windows ran more than five pairs (33
    ran 9-20), several with a p90 excess of 1.3-4.0 ms over a median of 0.1. For a
    normal, both estimates come out alike at five and ten values (0.70-0.73 sigma and
    0.82-0.87 sigma, before the constants); the quartiles leave out one outlier at each
    end."""
    if len(xs) < 3:
        return float("inf")
    s = sorted(xs)
    return 1.2533 * (timing.quantile(s, 0.75) - timing.quantile(s, 0.25)) / 1.349 / len(xs) ** 0.5


def _rel_error(times):
    """_std_error relative to the median."""
    med = timing.median(times) if times else 0.0
    return _std_error(times) / med if med > 0 else float("inf")
