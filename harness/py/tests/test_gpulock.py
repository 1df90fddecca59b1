"""The zygote's per-GPU timing lock as pure bookkeeping (a fake clock, no pipes)."""

from kgharness.zygote.gpulock import GpuLock


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


def test_one_holder_at_a_time_in_fifo_order():
    lock, granted, now = make()
    a, b, c = Holder("a"), Holder("b"), Holder("c")
    lock.request(a)
    lock.request(b)
    lock.request(c)
    assert granted == [a] and lock.held_by() is a
    now[0] = 1.0
    lock.release(a)
    assert granted == [a, b] and lock.held_by() is b
    assert b.lock_stats["wait"] == 1.0 and a.lock_stats["exclusive_held"] == 1.0
    assert lock.waiting_since(c) == 0.0 and lock.waiting_since(b) is None
    now[0] = 1.5
    lock.release(b)
    assert granted == [a, b, c] and c.lock_stats["wait"] == 1.5


def test_a_dead_holder_or_waiter_never_blocks_the_queue():
    lock, granted, _ = make()
    a, b, c = Holder("a"), Holder("b", alive=False), Holder("c")
    lock.request(a)
    lock.request(b)
    lock.request(c)
    lock.release(a)
    assert granted == [a, c]          # b's grant failed: the next in line got it
    lock.release(c)
    assert lock.held_by() is None


def test_repeated_requests_and_releases_of_strangers_are_harmless():
    lock, granted, _ = make()
    a, b = Holder("a"), Holder("b")
    lock.request(a)
    lock.request(a)
    lock.request(b)
    lock.request(b)
    lock.release(Holder("stranger"))
    lock.release(b)                   # a waiter that gave up
    lock.release(a)
    assert granted == [a] and lock.held_by() is None
