"""The zygote's per-GPU reader/writer lock as pure bookkeeping (a fake clock, no pipes)."""

from kgharness.gpulock import GpuLock


class Holder:
    def __init__(self, name, alive=True):
        self.name, self.alive, self.lock_stats = name, alive, {}

    def __repr__(self):
        return self.name


def make():
    now = [0.0]
    granted = []

    def grant(h):
        if h.alive:
            granted.append(h)
        return h.alive
    return GpuLock(grant, clock=lambda: now[0]), granted, now


def test_readers_share_and_a_writer_waits_for_all_of_them():
    lock, granted, now = make()
    r1, r2, w, r3 = Holder("r1"), Holder("r2"), Holder("w"), Holder("r3")
    lock.request(r1, "shared")
    lock.request(r2, "shared")
    assert granted == [r1, r2]
    lock.request(w, "exclusive")
    lock.request(r3, "shared")            # FIFO: behind the waiting writer
    assert granted == [r1, r2]
    now[0] = 1.0
    lock.release(r1)
    assert granted == [r1, r2]
    now[0] = 2.0
    lock.release(r2)
    assert granted == [r1, r2, w]
    assert w.lock_stats["wait"] == 2.0 and r2.lock_stats["shared_held"] == 2.0
    now[0] = 2.5
    lock.release(w)
    assert granted[-1] is r3 and w.lock_stats["exclusive_held"] == 0.5


def test_a_dead_holder_or_waiter_never_blocks_the_queue():
    lock, granted, _ = make()
    a, b, c = Holder("a"), Holder("b", alive=False), Holder("c")
    lock.request(a, "exclusive")
    lock.request(b, "exclusive")
    lock.request(c, "exclusive")
    lock.release(a)                       # b's grant fails (gone): c is next
    assert granted == [a, c]
    assert lock.waiting_since(c) is None and lock.waiting_since(b) is None


def test_repeated_and_unknown_requests():
    lock, granted, _ = make()
    a, b = Holder("a"), Holder("b")
    lock.request(a, "bogus")              # unknown mode means exclusive
    lock.request(a, "shared")             # already holding: ignored
    lock.request(b, "shared")
    assert granted == [a] and lock.waiting_since(b) == 0.0
    lock.release(b)                       # a waiter that leaves is just forgotten
    lock.release(a)
    assert granted == [a]
