"""The GPU's timing windows, as the zygote runs them: one evaluation at a time holds the
timing lock (kgharness.zygote.gpulock) while every other evaluation on the GPU is stopped,
this zygote's and, through kgharness.zygote.gpupeers, those of other zygotes on the GPU."""

import time

from .. import pipe
from . import gpulock, watch


class Windows:
    """The lock, the peers, and who is stopped for whom; `zygote` is the Zygote."""

    def __init__(self, zygote, peers=None):
        self.zygote = zygote
        self.lock = gpulock.GpuLock(self.grant)
        # Other zygotes on this GPU (kgharness.zygote.gpupeers): a local holder's window
        # opens once they have stopped; while one of theirs is open, ours are stopped.
        self.peers = peers
        self.pending = self.pending_since = None   # holder whose window waits for the peers
        self.peer_stopped = False

    def grant(self, child):
        """Give child the timing lock: first stop every other evaluation on this GPU (the
        peers' too: then the grant waits for peer_step)."""
        if self.peers is not None and not self.peers.owns():
            self.peers.want()
            self.pending, self.pending_since = child, time.monotonic()
            self.peer_step()
            return True
        return self.open(child, True)

    def open(self, child, exclusive):
        z = self.zygote
        now = time.monotonic()
        watch.freeze(list(z.children.values()), child, now, z.watchdog.scan)
        watch.thaw([child], now, self.waiting)    # stopped with the rest while the peers were timing
        if z.launchers is not None:
            z.launchers.hold(True)
        if z.hosts is not None:
            z.hosts.lend(child, child.host)
        # Inside the holder's window (its lock_exclusive_held): stopping the others and
        # rescanning their processes.
        child.lock_stats["freeze"] = child.lock_stats.get("freeze", 0.0) + time.monotonic() - now
        # SHARED_GPU: the window opens although a peer did not stop its evaluations (gpupeers)
        return child.tell(pipe.GRANTED if exclusive else pipe.SHARED_GPU)

    def peer_step(self):
        """Follow the other zygotes on this GPU: stop while one times, go on after, open a
        pending window once they have stopped."""
        if self.peers is None:
            return
        children = self.zygote.children
        act = self.peers.tick(bool(children))
        now = time.monotonic()
        if act == "stop":
            watch.freeze(list(children.values()), None, now, self.zygote.watchdog.scan)
            self.peer_stopped = True
        elif act == "go":
            watch.thaw(list(children.values()), now, self.waiting)
            self.peer_stopped = False
        elif isinstance(act, tuple):
            child, self.pending = self.pending, None
            self.peer_stopped = False
            if child is None:
                self.peers.release()
                return
            child.lock_stats["wait"] = child.lock_stats.get("wait", 0.0) + now - self.pending_since
            if not self.open(child, act[1]):
                self.release(child)

    def timing(self):
        """Whether a timing window is open on this GPU (ours, or a peer's: ours stopped)."""
        return self.lock.held_by() is not None or self.peer_stopped or self.pending is not None

    def waiting(self, child):
        """When child began waiting for the timing lock or device memory, or None."""
        adm = self.zygote.memory.admission
        since = [self.lock.waiting_since(child), adm.waiting_since(child) if adm is not None else None,
                 self.pending_since if self.pending is child else None]
        since = [t for t in since if t is not None]
        return min(since) if since else None

    def release(self, child):
        """Child no longer holds (or waits for) the lock: continue the others first, so the
        next holder, stopped while it waited, can read its grant."""
        z = self.zygote
        holder = self.lock.held_by() is child
        if z.hosts is not None:
            z.hosts.take_back(child, child.host)
        if self.pending is child:
            self.pending = None
        if holder and self.peers is None:
            watch.thaw(list(z.children.values()), time.monotonic(), self.waiting)
        elif holder:
            # Ours stay stopped until `run` is held again: a peer waiting for it could
            # otherwise open its window while they run.
            self.peers.release()
            self.peer_stopped = True
            self.peer_step()
        self.lock.release(child)
