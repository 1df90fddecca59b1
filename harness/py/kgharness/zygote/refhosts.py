"""Reference hosts: one reference runner per task and GPU, kept warm and lent to the
judge whose timing window is open.

Without them every evaluation of a task forked a reference runner that made its own CUDA
context, imported the task, built the model, warmed it and held its share of device
memory for the whole evaluation, although an evaluation whose reference work is shared
(kgharness.judge.refstore) needs its reference only inside its timing window, and one window
is open on a GPU at a time. On an H200 a heavy GRPO group's evaluations waited for
device memory 67% of their slot time, and a reference's share was about half of what
each reserved (README, Measurements, tenth session).

The zygote forks a host when a task's first job arrives (a process like any runner:
its own directory, walls and uid, never candidate code) and every judge of that task
inherits one end of its channel. A judge asks the zygote what to do with it
(`host_ask`):

- `create`: the host is fresh; this judge loads it and uses it as its own reference
  runner. Once its window has closed (or it ends untimed) and its judge found the host
  sound (`host_ok`), the host is ready, and its memory moves from that evaluation's
  reservation to the hosts' own account in admission.
- `use`: the host is ready and the task's reference work is shared: this judge forks no
  reference of its own, reserves no memory for one, and borrows the host inside its
  timing window only (the zygote continues it when the window opens and stops it when
  the window closes). A borrower first says `hello` with a nonce and reads until its
  answer comes: a judge killed in mid-window leaves replies behind.
- `none`: as before, its own reference runner.

The host is stopped whenever nobody uses it: the reference (a task registered over the
API is untrusted code) cannot run beside another evaluation's window. A host that
dies or breaks its limits ends hosting for its task in this zygote; one that no running
evaluation inherited is retired when unused for HOST_IDLE_S, older than HOST_MAX_AGE_S,
or in the way of admission. Verdicts are the same with hosts on and off; the speedup
still comes from the reference and the candidate timed in one window.
"""

import os
import signal
import time

from .. import channel, options, procs
from ..judge import refstore
from ..pipe import ASK_CREATE, ASK_NONE, ASK_USE
from ..runner import spawn

ENV = "KERNELGATE_REFERENCE_HOST"
HOST_IDLE_S = 30.0        # unused this long: retired (its memory goes back to admission)
HOST_MAX_AGE_S = 600.0    # older: retired once unused (its CPU-time limit, a fresh allocator)
MAX_HOSTS = 16
HOST_TIMEOUT_S = 600.0    # the host's rlimits are sized for this wall time (kgharness.sandbox)


def enabled(mode, share_mb):
    """Sharing on (hosts serve shared evaluations only) and $KERNELGATE_REFERENCE_HOST
    on; unset, on in GPU mode. On an H200 (7 x 16 heavy GRPO groups; docs/measurements, 2026-12-03)
    hosts gave 1.54-1.57 evals/s against 1.43 off in one call, with the same verdicts,
    once members that asked before their host was ready could be admitted without their
    reference; the GPU suite (hacks included) passed with them on, 162 of 162, twice at
    5989ce9+ (docs/measurements, 2026-12-03). Off by default on a CPU: the interpreter times nothing
    a host would save."""
    flag = os.environ.get(ENV, "").strip().lower()
    if flag in ("0", "off", "false", "no"):
        return False
    return share_mb > 0 and (flag in ("1", "on", "true", "yes") or (not flag and mode == "gpu"))


def wants_host(job, mode):
    """A job whose reference is timed: an evaluation (not a task check) with timing on."""
    if not isinstance(job, dict) or job.get("task_check"):
        return False
    opts = options.parse(job.get("options"))
    return bool(opts["timing"]) and (mode == "gpu" or bool(opts["cpu_timing"]))


class Host:
    """One host, as the zygote sees it."""

    def __init__(self, key, pid, sock, now):
        self.key, self.pid, self.sock = key, pid, sock
        self.state = "new"         # new, loading (its creator uses it), ready, gone
        self.creator = None
        self.users = set()         # children told `create` or `use`, until they finish
        self.mb = 0.0              # what admission counts for it, once ready
        self.born = self.last = now
        self.lent = None           # the child whose window it runs in

    def signal(self, sig):
        try:
            os.killpg(self.pid, sig)
        except OSError:
            pass


class Hosts:
    """The zygote's hosts, by refstore key. `mem` is its kgharness.zygote.admission.Admission (or
    None); `log` its log function."""

    def __init__(self, mode, device, base, mem=None, log=lambda msg: None, clock=time.monotonic):
        self.mode, self.device, self.base, self.mem, self.log = mode, device, base, mem, log
        self.clock = clock
        self.by_key, self.by_pid = {}, {}
        self.banned = set()        # keys whose host failed: their evaluations run their own
        self.forked = 0            # hosts forked so far (their directories' numbers)

    def fds(self):
        return [h.sock.fileno() for h in self.by_key.values() if h.sock is not None]

    def pids(self):
        return set(self.by_pid)

    def for_job(self, job):
        """The host a new job's judge inherits (forked now for a task's first job), or None."""
        if not wants_host(job, self.mode):
            return None
        key = refstore.key(job, options.parse(job.get("options")))
        h = self.by_key.get(key)
        if h is not None or key in self.banned:
            return h
        if len(self.by_key) >= MAX_HOSTS and not self.retire_one():
            return None
        try:
            h = self.fork(key, job)
        except Exception as e:  # noqa: BLE001 - no host is no worse than before
            self.log(f"reference host not forked: {e}")
            return None
        self.by_key[key], self.by_pid[h.pid] = h, h
        return h

    def fork(self, key, job):
        self.forked += 1
        hdir = os.path.join(self.base, f"host-{self.forked}-{key[:8]}")
        os.mkdir(hdir, 0o711)
        rdir = os.path.join(hdir, "reference")
        os.mkdir(rdir, 0o700)
        opts = dict(job.get("options") or {})
        opts["timeout_s"] = max(HOST_TIMEOUT_S, float(opts.get("timeout_s") or 0))
        host_job = {"task": job.get("task"), "options": opts}    # never the candidate's code
        ours, theirs = channel.pair()
        pid = os.fork()
        if pid == 0:
            try:
                signal.set_wakeup_fd(-1)
            except (ValueError, OSError):
                pass
            spawn.run_runner("reference", host_job, self.mode, self.device, rdir, theirs)   # never returns
        theirs.close()
        return Host(key, pid, ours, self.clock())

    # ---- what judges say ------------------------------------------------------------
    def ask(self, child, host, shared):
        if host is None or host.state == "gone":
            return ASK_NONE
        if child in host.users:
            return ASK_CREATE if host.creator is child else ASK_USE
        if host.state == "new" and host.creator is None:
            host.state, host.creator = "loading", child
            host.users.add(child)
            return ASK_CREATE
        if host.state == "ready" and shared:
            host.users.add(child)
            host.last = self.clock()
            return ASK_USE
        return ASK_NONE

    def ok(self, child, host, mb):
        """Its creator is done with the host (after its window, or at its end) and found it
        sound: ready for the task's next evaluations now, its memory moved from the
        creator's reservation to the hosts' account."""
        if host is None or host.creator is not child or host.state != "loading" or not _mb(mb):
            return
        host.state, host.mb = "ready", float(mb)
        host.signal(signal.SIGSTOP)
        host.users.discard(child)
        if self.mem is not None:
            self.mem.host(host.key, host.mb)
            self.mem.less(child, host.mb)

    def measured(self, host, mb):
        """A borrower saw the host hold mb MiB (its context included)."""
        if host is not None and host.state == "ready" and _mb(mb) and mb > host.mb:
            host.mb = float(mb)
            if self.mem is not None:
                self.mem.host(host.key, host.mb)

    # ---- windows --------------------------------------------------------------------
    def lend(self, child, host):
        """child's window opens: its host runs."""
        if host is not None and host.state == "ready" and child in host.users:
            host.lent = child
            host.signal(signal.SIGCONT)

    def take_back(self, child, host):
        if host is not None and host.lent is child:
            host.lent = None
            if host.state == "ready":
                host.signal(signal.SIGSTOP)

    # ---- ends -----------------------------------------------------------------------
    def finished(self, child, host):
        """child's evaluation ended (after its lock's release took its window's host back,
        before admission releases what it held)."""
        if host is None:
            return
        host.users.discard(child)
        host.last = self.clock()
        if host.creator is child and host.state == "loading":
            self.retire(host, "its first evaluation did not find it sound")

    def reaped(self, pid):
        """True when pid was a host (it is gone now)."""
        h = self.by_pid.pop(pid, None)
        if h is None:
            return False
        if h.state != "gone":
            self.log(f"reference host {pid} exited; its task's evaluations run their own reference")
            self.banned.add(h.key)
        self.drop(h)
        return True

    def retire(self, h, why, ban=False):
        if h.state != "gone":
            self.log(f"reference host {h.pid} retired: {why}")
        if ban:
            self.banned.add(h.key)
        self.drop(h)
        h.signal(signal.SIGKILL)
        h.signal(signal.SIGCONT)

    def drop(self, h):
        h.state = "gone"
        if self.by_key.get(h.key) is h:
            del self.by_key[h.key]
            if self.mem is not None:
                self.mem.host(h.key, 0.0)
        if h.sock is not None:
            h.sock.close()
            h.sock = None

    def retire_one(self):
        idle = [h for h in self.by_key.values() if not h.users and h.state in ("new", "ready")]
        if not idle:
            return False
        self.retire(min(idle, key=lambda h: h.last), "room for another task's host")
        return True

    def tick(self, now, waiting, groups, limits, inherited=()):
        """The watchdog's turn: retire hosts unused too long, too old, or in the way of an
        evaluation waiting for memory while no evaluation of their task is in flight (one
        that has not asked yet may still borrow: on an H200, retiring every host without a
        borrower left 27 of 112 heavy evaluations borrowing); kill one over its limits
        (its task's hosting ends). groups: procs.scan's {leader: (pids, rss)}; limits: (max
        processes, max RSS); inherited: the hosts running evaluations hold."""
        for h in list(self.by_key.values()):
            pids, rss = groups.get(h.pid, (set(), 0))
            if len(pids) > limits[0] or rss > limits[1]:
                self.retire(h, f"{len(pids)} processes, {rss >> 20} MiB of host memory: over its limits",
                            ban=True)
            elif not h.users and not any(x is h for x in inherited) and \
                    (now - h.last > HOST_IDLE_S or now - h.born > HOST_MAX_AGE_S or (waiting and h.state == "ready")):
                self.retire(h, "unused" if now - h.last > HOST_IDLE_S else
                            "old" if now - h.born > HOST_MAX_AGE_S else "memory wanted")

    def shutdown(self):
        for h in list(self.by_key.values()):
            self.retire(h, "shutdown")
        for pid in list(self.by_pid):
            procs.kill_group(pid)


def _mb(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool) and 0 < x < 1e9
