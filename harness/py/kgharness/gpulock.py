"""The per-GPU reader/writer lock the zygote grants to its children.

"shared" is for GPU work that may overlap with other children's (reference outputs,
correctness trials, coverage); "exclusive" is for timing, so no other child's kernels
run while one is timed. Grants are strict FIFO: a waiting timer is never starved by a
stream of readers, and a reader arriving after a waiting timer waits for it.

Pure bookkeeping, no I/O: `grant(holder)` is the zygote's callback that tells a child
it holds the lock (False when the child is gone, and the next in line is tried).
Holders are any hashable objects with a `lock_stats` dict (the zygote's Child).
"""

import collections
import time

MODES = ("shared", "exclusive")


class GpuLock:
    def __init__(self, grant, clock=time.monotonic):
        self.grant, self.clock = grant, clock
        self.holders = {}                    # holder -> (mode, granted at)
        self.queue = collections.deque()     # (holder, mode, asked at)

    def request(self, who, mode):
        if mode not in MODES:
            mode = "exclusive"
        if who in self.holders or any(w is who for w, _, _ in self.queue):
            return
        self.queue.append((who, mode, self.clock()))
        self._grant_next()

    def release(self, who):
        """Unlock, or forget a holder that died (queued or holding)."""
        self.queue = collections.deque(q for q in self.queue if q[0] is not who)
        held = self.holders.pop(who, None)
        if held is not None:
            mode, since = held
            _add(who, f"{mode}_held", self.clock() - since)
            self._grant_next()

    def waiting_since(self, who):
        """When `who` started waiting, or None: waits do not count against its timeout."""
        for w, _, asked in self.queue:
            if w is who:
                return asked
        return None

    def _grant_next(self):
        while self.queue:
            who, mode, asked = self.queue[0]
            if self.holders and (mode == "exclusive" or
                                 any(m == "exclusive" for m, _ in self.holders.values())):
                return
            self.queue.popleft()
            now = self.clock()
            _add(who, "wait", now - asked)
            if self.grant(who):
                self.holders[who] = (mode, now)


def _add(who, key, seconds):
    stats = getattr(who, "lock_stats", None)
    if stats is not None:
        stats[key] = stats.get(key, 0.0) + seconds
