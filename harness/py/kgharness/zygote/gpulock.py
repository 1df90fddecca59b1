"""The per-GPU timing lock the zygote grants to its evaluations, one at a time.

Timing is exclusive: while an evaluation holds the lock, the zygote stops every other
evaluation on the GPU (kgharness.zygote), so nothing else can launch work there, and
the holder's judge waits for what they had queued to drain. A cooperative lock could
not exclude hostile code that launches whenever it likes; stopped processes launch
nothing. Grants are strict FIFO.

Pure bookkeeping, no I/O: `grant(holder)` is the zygote's callback that tells a holder
it holds the lock (False when it is gone, and the next in line is tried). Holders are
hashable objects with a `lock_stats` dict (the zygote's Child).
"""

import collections
import time


class GpuLock:
    def __init__(self, grant, clock=time.monotonic):
        self.grant, self.clock = grant, clock
        self.holder = None                   # (holder, granted at)
        self.queue = collections.deque()     # (holder, asked at)

    def request(self, who):
        if (self.holder and self.holder[0] is who) or any(w is who for w, _ in self.queue):
            return
        self.queue.append((who, self.clock()))
        self._grant_next()

    def release(self, who):
        """Unlock, or forget a holder that died (queued or holding)."""
        self.queue = collections.deque(q for q in self.queue if q[0] is not who)
        if self.holder is not None and self.holder[0] is who:
            _add(who, "exclusive_held", self.clock() - self.holder[1])
            self.holder = None
            self._grant_next()

    def held_by(self):
        return self.holder[0] if self.holder else None

    def waiting_since(self, who):
        """When `who` started waiting, or None: waits do not count against its timeout."""
        for w, asked in self.queue:
            if w is who:
                return asked
        return None

    def _grant_next(self):
        while self.queue and self.holder is None:
            who, asked = self.queue.popleft()
            now = self.clock()
            _add(who, "wait", now - asked)
            if self.grant(who):
                self.holder = (who, now)


def _add(who, key, seconds):
    stats = getattr(who, "lock_stats", None)
    if stats is not None:
        stats[key] = stats.get(key, 0.0) + seconds
