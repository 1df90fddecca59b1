"""The calls of a timing window (kgharness.judge.window), one at a time: each timed call is
one request the runner times on its own clock and the judge on its, with the candidate's
buffer checksummed just before and just after it, and, in a pair, the pair's outputs
compared in its last request.
"""

import time

from .. import timing

# The spin head start (kgharness.timing) must outlast the host's launches of a call, or
# the GPU idles inside the call's events and host speed leaks into its time. With a fixed
# 0.3 ms, heavy candidates (whose host enqueue under the guards is 0.4-0.8 ms) measured
# 3.4-7.6% apart from one evaluation to the next on the H200, against 0.0-0.1% with a
# spin the judge sizes. It sets one length for both sides: HEAD_MARGIN times the larger
# of the two sides' median enqueue so far, between these bounds. A call slower to enqueue
# than that (a rare outlier) is timed long and the median drops it; twice the slowest
# enqueue instead cost level2 windows 40% more spin. A runner that reports more only
# lengthens both sides' spins (the wall check stays symmetric) and spends its budget.
HEAD_MS = (0.3, 20.0)
HEAD_MARGIN = 2.0
# A timed output's mismatch read as numbers, not a cache (numerical).
NUMERIC_SHARE = 1e-6
NUMERIC_RATIO = 4.0
# What a runner says its timed request spent (kgharness.runner.handler.Runner.go): diagnostics.
GO_PARTS = ("inputs", "timed", "write")


class TimedCalls:
    """`judge` is the Judge, `trials` the Trials whose buffers and spec the window uses,
    `spent` the window's diagnostics (stage_ms window_*), `ops` where the checks run."""

    def __init__(self, judge, trials, spent, ops, gpu):
        self.judge, self.trials, self.spent, self.ops = judge, trials, spent, ops
        self.pending = None       # the candidate buffer's checksum after its last call
        self.compared = None      # the last pair's comparison, made in its last request
        self.head_ms = HEAD_MS[0] if gpu else None
        self.enqueue = {"reference": [], "candidate": []}

    def call(self, r, buf, seed):
        """One call alone (warm-up, the reference timed alone): (runner's ms, judge's wall ms)."""
        # The judge's work around a call is the same for both sides (a checksum of its
        # buffer before and after, on the judge service's context): a GPU context switch
        # that one side paid more often than the other would show on the judge's clock.
        c0 = time.perf_counter()
        self.checked_before(r, self.ops.fingerprint(buf))
        c1 = time.perf_counter()
        got = self.go(r, buf, seed)
        c2 = time.perf_counter()
        self.checked_after(r, self.ops.fingerprint(buf))
        self.spent["check"] += (c1 - c0 + time.perf_counter() - c2) * 1e3
        return got

    def go(self, r, buf, seed):
        """The timed request itself: (runner's ms, judge's wall ms)."""
        j = self.judge
        c1 = time.perf_counter()
        # The runner makes the call's inputs inside the timed request, so this clock covers
        # them and the call as one (a request of their own was on no clock: a candidate
        # could compute its output there for free). Its own GPU work also comes last
        # before its timed call, on both sides alike: a call that follows the judge's GPU
        # work instead pays a context switch on the GPU that its timer does not see
        # (0.14-0.5 ms on the H200).
        rep = j.talk.ask(r, "go", seed=seed, buf=buf, head_ms=self.head_ms)
        wall = (time.perf_counter() - c1) * 1e3
        self.spent["go"] += wall
        self.spent["calls"] += 1
        self.size_head(r, rep.get("enqueue_ms"))
        self.go_parts(rep.get("parts_ms"))
        ms = rep.get("ms")
        if not isinstance(ms, (int, float)) or isinstance(ms, bool) or not (0 < ms < 1e7):
            if r.role == "reference":
                j.task_fail(f"the reference's timer reported {str(ms)[:32]}")
            j.forge(f"the candidate's timer reported {str(ms)[:32]}")
        if rep.get("written") is not True:
            if r.role == "reference":
                j.task_fail("the reference's timed outputs did not fit its buffer")
            j.flag("cache", "a timed call returned outputs of another shape or type")
            j.fail("reward_hack", "")
        return float(ms), wall

    def go_parts(self, parts):
        """Where the runner says its timed request went (making the inputs, the timed call,
        the copy into the buffer): summed into stage_ms window_go_* to show where a window's
        time goes. The runner's own word, so a diagnostic that decides nothing."""
        if not isinstance(parts, dict):
            return
        for k in GO_PARTS:
            x = parts.get(k)
            if isinstance(x, (int, float)) and not isinstance(x, bool) and 0 <= x < 1e6:
                self.spent[f"go_{k}"] = self.spent.get(f"go_{k}", 0.0) + float(x)

    def checked_before(self, r, fp):
        """r's buffer just before its call: the candidate's must still be what it was just
        after its last call (outputs that changed after it said it was done)."""
        if r.role == "candidate":
            if self.pending is not None and fp != self.pending:
                self.judge.flag("forge", "the candidate's outputs changed after it reported the call done")
                self.judge.fail("reward_hack", "")
            self.pending = None

    def checked_after(self, r, fp):
        if r.role == "candidate":
            self.pending = fp

    def size_head(self, r, enqueue):
        if self.head_ms is None or not isinstance(enqueue, (int, float)) or isinstance(enqueue, bool) \
                or not 0 < enqueue < 1e6:
            return
        self.enqueue[r.role].append(float(enqueue))
        typical = max(timing.median(v) for v in self.enqueue.values() if v)
        self.head_ms = min(HEAD_MS[1], max(HEAD_MS[0], HEAD_MARGIN * typical))

    def check_pending(self, candidate):
        self.checked_before(candidate, self.ops.fingerprint(self.trials.cand_buf))

    def paired(self, first, second, seed):
        """Both runners on one seed, each stopped while the other runs. Around each call the
        judge asks the judge service once before it and once after it, on both sides alike,
        but the first call's checksum after and the second's before are one request, and
        the second's after carries the pair's comparison (verify): three requests a pair,
        which were five, each 0.7-1.1 ms of the window (level2 and heavy, H200)."""
        bufs = {"reference": self.trials.ref_buf, "candidate": self.trials.cand_buf}
        out = {}
        s0 = time.perf_counter()
        second.stop()
        s1 = time.perf_counter()
        try:
            self.checked_before(first, self.ops.fingerprint(bufs[first.role]))
            c1 = time.perf_counter()
            out[first.role] = self.go(first, bufs[first.role], seed)
            c2 = time.perf_counter()
            after, before = self.ops.checks([bufs[first.role], bufs[second.role]])["fps"]
            self.checked_after(first, after)
            self.checked_before(second, before)
            self.spent["check"] += (c1 - s1 + time.perf_counter() - c2) * 1e3
        finally:
            s2 = time.perf_counter()
            second.cont()
        first.stop()
        s3 = time.perf_counter()
        try:
            out[second.role] = self.go(second, bufs[second.role], seed)
            v0 = time.perf_counter()
            got = self.ops.checks([bufs[second.role]], compare=(
                self.trials.cand_buf, self.trials.spec, self.trials.ref_buf, self.trials.spec, self.trials.tol))
            self.checked_after(second, got["fps"][0])
            self.compared = got["compare"]
            self.spent["verify"] += (time.perf_counter() - v0) * 1e3
        finally:
            s4 = time.perf_counter()
            first.cont()
            self.spent["switch"] += (s1 - s0 + s3 - s2 + time.perf_counter() - s4) * 1e3
        return out

    def verify(self, k):
        """Pair k's timed outputs against each other: the comparison made in the pair's last
        request (paired), or asked now."""
        res, self.compared = self.compared, None
        if res is None:
            v0 = time.perf_counter()
            spec = self.trials.spec
            res = self.ops.compare(self.trials.cand_buf, spec, self.trials.ref_buf, spec, self.trials.tol)
            self.spent["verify"] += (time.perf_counter() - v0) * 1e3
        self.spent["verifies"] += 1
        if not res["ok"]:
            if numerical(res):
                self.judge.fail("incorrect", f"mismatch in timed call {k} (a fresh seed): {res['msg'][:600]}")
            self.judge.flag("cache", f"timed call {k} did not match the reference: {res['msg'][:120]}")
            self.judge.fail("reward_hack", "")


def numerical(res):
    """A timed output that missed the tolerance the way numbers do, not the way a cache or
    a skipped call does: at most NUMERIC_SHARE of its elements, none NaN or Inf, none more
    than NUMERIC_RATIO times its tolerance away. Such a kernel fails on that input like a
    correctness trial (`incorrect`), not as a cheat: an honest bf16 GroupNorm+SiLU kernel
    had 4 of 2^29 outputs 3 ULPs off (2.109 against 2.0625, tolerance 0.043) on one timed
    seed and was flagged `cache` (H200, 2026-12-03). Outputs under 1/NUMERIC_SHARE
    elements get no such reading: any mismatch there is a cache."""
    n, total = res.get("n_bad"), res.get("numel")
    ratio = res.get("worst_ratio")
    if not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (n, total, ratio)):
        return False
    return 0 < n <= NUMERIC_SHARE * total and res.get("nonfinite") == 0 and ratio <= NUMERIC_RATIO
