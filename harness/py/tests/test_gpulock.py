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


def test_a_child_runs_at_normal_priority_only_while_it_holds_the_lock():
    """PipeContext's side: background nice outside the lock, 0 inside, either mode.
    Runs in a forked process so pytest's own priority is untouched."""
    import json
    import os

    from kgharness import child

    rec_r, rec_w = os.pipe()
    grant_r, grant_w = os.pipe()
    report_r, report_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            niced = child._background_priority()
            ctx = child.PipeContext(rec_w, grant_r, "gpu", "cuda:0", "/tmp", {})
            seen = [os.getpriority(os.PRIO_PROCESS, 0)]
            for lock in (ctx.gpu_lock, ctx.timing_lock):
                os.write(grant_w, b"g")           # the zygote's grant, ahead of time
                with lock():
                    seen.append(os.getpriority(os.PRIO_PROCESS, 0))
                seen.append(os.getpriority(os.PRIO_PROCESS, 0))
            os.write(report_w, json.dumps([niced, seen]).encode())
        finally:
            os._exit(0)
    os.close(report_w)
    _, status = os.waitpid(pid, 0)
    niced, seen = json.loads(os.read(report_r, 1000))
    # Without the right to raise RLIMIT_NICE (no CAP_SYS_RESOURCE), nothing is lowered.
    bg = child.BACKGROUND_NICE if niced else 0
    assert seen == [bg, 0, bg, 0, bg], seen
    records = os.read(rec_r, 10000).decode().splitlines()
    assert [json.loads(r)["type"] for r in records] == ["lock", "unlock", "lock", "unlock"]
