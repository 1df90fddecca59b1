"""Timing windows across processes: zygotes that share a GPU take turns.

One zygote stops its own evaluations while one of them is timed (kgharness.zygote.gpulock),
but a second kernelgate process on the same GPU (parallel test workers, `kernelgate
eval` beside a server) kept running: on an H200, four test workers' zygotes sharing the
GPU let an unjoined side stream pass as correct and flagged honest kernels `forge` by
0.3-1.5 ms, while one zygote alone judged the same kernels right every time.

Two flock(2) files per GPU, on a path every process on the host sees:

- `window`: held exclusively by the zygote whose evaluation is being timed (from the
  moment it asks);
- `run`: held shared by every zygote whose evaluations may run; the timing zygote takes
  it exclusively, which it gets once every other zygote has stopped its evaluations and
  let go;
- `want`: held shared by a zygote that waits for `window`, so that one that just closed
  its window sees it and lets it have the next turn.

Every zygote polls (`tick`, non-blocking, while it has evaluations: every POLL_S once a
peer has been about, ALONE_POLL_S before): when another holds `window`, it stops its
evaluations and lets go of `run`, and carries on once `window` is free. flock locks die with their process, so a killed zygote cannot
hold the GPU. A peer that does not let go within WAIT_MAX_S (its loop blocked, or a
kernelgate without this module) does not stall timing forever: the window opens anyway
and its verdict says timing was not exclusive.

The state machine is pure apart from the two descriptors; the zygote does the stopping.
"""

import fcntl
import os
import re
import time

POLL_S = 0.005        # how often a zygote looks while a peer is about (or it waits for one)
ALONE_POLL_S = 0.1    # ... and while none has been seen for PEER_MEMORY_S: the usual case,
PEER_MEMORY_S = 60.0  # one zygote per GPU, pays no extra wakeups and no turn-taking pause
WAIT_MAX_S = 20.0
LOCK_DIR = "/tmp"


class Peers:
    IDLE, RUNNING, YIELDED, WANT, OWN = "idle", "running", "yielded", "want", "own"

    def __init__(self, key, lock_dir=None, clock=time.monotonic):
        base = os.path.join(lock_dir or LOCK_DIR, f"kernelgate-gpu-{_safe(key)}")
        self.window_fd, self.run_fd = _open(base + ".window"), _open(base + ".run")
        self.want_fd = _open(base + ".want")
        # Every zygote on the GPU holds a POSIX read lock here while it lives: unlike flock's,
        # a process's own POSIX locks never conflict with each other, so trying for a write
        # lock asks "is any other zygote on this GPU?" (alone_on_gpu).
        self.members_fd = _open(base + ".members", os.O_RDWR)
        fcntl.lockf(self.members_fd, fcntl.LOCK_SH)
        self.wanting = False          # `want` held shared
        self.clock = clock
        self.state = Peers.IDLE
        self.run_mode = None          # the flock mode held on `run` (None, LOCK_SH, LOCK_EX)
        self.want_since = None
        self.calm_until = 0.0         # no new window of ours before this (peers get a turn)
        self.seen_until = 0.0         # a peer was about until this
        self.next_look = 0.0          # the next probe of `window` while running

    def fds(self):
        return [self.window_fd, self.run_fd, self.want_fd, self.members_fd]

    def alone_on_gpu(self):
        """No other zygote (another kernelgate process, a parallel test worker) holds this
        GPU now: then an evaluation this zygote runs alone has the GPU to itself."""
        try:
            fcntl.lockf(self.members_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False
        fcntl.lockf(self.members_fd, fcntl.LOCK_SH)   # a conversion: never unlocked between
        return True

    def close(self):
        for fd in self.fds():
            os.close(fd)

    # ---- what the zygote asks --------------------------------------------------------------
    def owns(self):
        return self.state == Peers.OWN

    def yielded(self):
        return self.state == Peers.YIELDED

    def poll_s(self):
        """How soon the zygote should tick again."""
        if self.state in (Peers.WANT, Peers.YIELDED) or self.clock() < self.seen_until:
            return POLL_S
        return ALONE_POLL_S

    def want(self):
        """A local evaluation was granted the timing lock: take the GPU from the peers."""
        if self.state != Peers.OWN:
            self.state, self.want_since = Peers.WANT, self.clock()

    def release(self):
        """The local window closed (or its holder died): give the GPU back."""
        if self.state in (Peers.OWN, Peers.WANT):
            self._run(None)
            self._wanting(False)
            fcntl.flock(self.window_fd, fcntl.LOCK_UN)
            self.state, self.want_since = Peers.IDLE, None
            # A waiting peer polls every POLL_S: a zygote with a queue of windows would
            # otherwise take `window` back before the peer saw it free.
            if _try(self.want_fd, fcntl.LOCK_EX):
                fcntl.flock(self.want_fd, fcntl.LOCK_UN)
            else:
                self._seen()
                self.calm_until = self.clock() + 2 * POLL_S

    def tick(self, active):
        """One poll; `active`: this zygote has evaluations. Returns what the zygote must do:
        "stop" (stop its evaluations), "go" (continue them), ("grant", exclusive) (open the
        local holder's window), or None. "stop" and "go" may repeat: both are idempotent."""
        s = self.state
        if s == Peers.WANT:
            return self._take()
        if s == Peers.OWN:
            return None
        if not active:
            self._run(None)
            self.state = Peers.IDLE
            return None
        if s == Peers.RUNNING and (self.clock() < self.next_look or not self._window_taken()):
            return None
        if s != Peers.RUNNING and not self._window_taken() and self._run(fcntl.LOCK_SH):
            self.state = Peers.RUNNING
            return "go"
        self._run(None)
        self.state = Peers.YIELDED
        return "stop"

    # ---- pieces ------------------------------------------------------------------------------
    def _take(self):
        self._wanting(True)
        if self.clock() < self.calm_until:
            return None
        if not _try(self.window_fd, fcntl.LOCK_EX):
            self._seen()
            self._run(None)   # a peer is timing: stop like everyone else; the holder waits
            return "stop"
        # While this zygote holds `window` no peer can open one: its own evaluations may run
        # on until the peers have let go of `run`.
        self._wanting(False)
        if self._run(fcntl.LOCK_EX):
            self.state = Peers.OWN
            return ("grant", True)
        self._seen()
        if self.clock() - self.want_since > WAIT_MAX_S:
            self.state = Peers.OWN
            return ("grant", False)
        return None

    def _wanting(self, on):
        if on and not self.wanting:
            self.wanting = _try(self.want_fd, fcntl.LOCK_SH)   # refused only during a peer's probe
        elif not on and self.wanting:
            fcntl.flock(self.want_fd, fcntl.LOCK_UN)
            self.wanting = False

    def _window_taken(self):
        self.next_look = self.clock() + self.poll_s()
        if _try(self.window_fd, fcntl.LOCK_SH):
            fcntl.flock(self.window_fd, fcntl.LOCK_UN)
            return False
        self._seen()
        return True

    def _seen(self):
        self.seen_until = self.clock() + PEER_MEMORY_S

    def _run(self, mode):
        """Hold `run` in mode (None: let go); False when a peer's lock is in the way. A held
        lock is dropped before another is tried: flock does not convert atomically."""
        if mode == self.run_mode:
            return True
        if self.run_mode is not None:
            fcntl.flock(self.run_fd, fcntl.LOCK_UN)
            self.run_mode = None
        if mode is None or not _try(self.run_fd, mode):
            return mode is None
        self.run_mode = mode
        return True


def for_device(device, env=None, lock_dir=None):
    """Peers for this zygote's GPU, or None where the GPU cannot be named."""
    key = gpu_key(device, os.environ if env is None else env)
    return Peers(key, lock_dir) if key else None


def gpu_key(device, env, proc="/proc/driver/nvidia/gpus"):
    """The GPU's PCI bus id (one name, however a process numbers its GPUs), else the
    CUDA_VISIBLE_DEVICES entry it was given, else the device index."""
    idx = int(str(device).rpartition(":")[2] or 0) if str(device).rpartition(":")[2].isdigit() else 0
    visible = env.get("CUDA_VISIBLE_DEVICES")
    entry = str(idx)
    if visible:
        names = [x.strip() for x in visible.split(",") if x.strip()]
        if idx >= len(names):
            return None
        entry = names[idx]
    try:
        buses = sorted(os.listdir(proc))
    except OSError:
        return entry
    if entry.isdigit():
        # CUDA numbers GPUs fastest first unless CUDA_DEVICE_ORDER=PCI_BUS_ID; with one GPU,
        # or identical ones (its tie-break is bus order), both orders agree.
        n = int(entry)
        return buses[n] if n < len(buses) else entry
    for bus in buses:
        try:
            with open(os.path.join(proc, bus, "information")) as f:
                if entry.lower() in f.read().lower():
                    return bus
        except OSError:
            continue
    return entry


def _safe(key):
    return re.sub(r"[^A-Za-z0-9._-]", "_", str(key))[:80]


def _open(path, mode=os.O_RDONLY):
    fd = os.open(path, mode | os.O_CREAT | os.O_CLOEXEC, 0o666)
    try:
        os.fchmod(fd, 0o666)     # another user's zygote opens it too (flock needs only a read fd)
    except OSError:
        pass
    return fd


def _try(fd, mode):
    try:
        fcntl.flock(fd, mode | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
