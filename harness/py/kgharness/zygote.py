"""The warm zygote: torch and triton imported once, one single-use judge per job.

    python -m kgharness.zygote --mode gpu|cpu_interpreter --device-index N
        [--evaluator MODULE:FUNC] [--tmp-base DIR] [--memory-budget-mb MB]

Records from Go arrive on fd 3, ours leave on fd 4 (docs/protocol.md). The
loop is single-threaded (poll + a SIGCHLD wakeup fd) because it forks: a
thread in the zygote would leave its locks held in every child. It owns the
per-GPU timing lock (stopping every other evaluation while one is timed), admission
by device memory, each evaluation's deadline and the watchdog (kgharness.watch), and
writes exactly one `result` per accepted `eval`, whatever the evaluation did.
CUDA is never initialised here: each runner initialises its own context, and the judge
service (kgharness.judgesvc, forked once at start) holds the one all judges share.
"""

import argparse
import contextlib
import json
import os
import select
import shutil
import signal
import struct
import sys
import tempfile
import time

from . import (admission, basedir, gpulock, gpupeers, judgesvc, launchers, outcome, precompile, procs, protocol, refhost,
               sandbox, startup, watch)

IN_FD, OUT_FD = 3, 4
TICK_S = 0.1                  # watchdog period (10 Hz)
# The shared store's trims (Zygote.squeeze): one at a time, an answer awaited this long at
# most, and a pause after each (a trim that freed nothing is not asked again at once).
TRIM_ANSWER_S = 10.0
TRIM_GAP_S = 1.0
CHILD_LINE_LIMIT = 4 << 20    # a child's record line (its verdict) larger than this is refused
HOST_RSS_LIMIT = 32 << 30     # a reference host's host memory, like a runner's default memory_limit_mb
# A precompile stage this long is logged once, with what its processes are doing: on an
# H200 a few heavy evaluations sat in it until the runner's wait (half the compile budget)
# ran out, their compile-only child stopped at birth (Zygote.unstick); anything else that
# holds one there shows here.
SLOW_PRECOMPILE_S = 15.0
PR_SET_CHILD_SUBREAPER = 36


log = startup.log


ADMISSION_LOG_ENV = "KERNELGATE_ADMISSION_LOG"


class AdmissionLog:
    """Every admission event as a JSON line in a file ($KERNELGATE_ADMISSION_LOG), with the
    wall clock and the holder's runner pids, to set beside nvidia-smi's per-process
    memory (scripts/measure/admission_trace.py): what each evaluation reserved against what its
    processes held, and what the GPU held beyond every reservation."""

    def __init__(self, path, budget_mb):
        self.f = open(path, "a", buffering=1)
        self("start", None, {"budget": round(float(budget_mb), 1), "pid": os.getpid()})

    def __call__(self, event, who, fields):
        rec = {"t": round(time.time(), 3), "ev": event, **fields}
        if who is not None:
            rec.update(id=getattr(who, "id", None), pids=dict(getattr(who, "runners", {}) or {}),
                       key=admission.task_key(getattr(who, "job", None))[:8])
        try:
            self.f.write(json.dumps(rec) + "\n")
        except (OSError, ValueError):
            pass             # a diagnostic log must never stop admission


class Child:
    """One evaluation in flight, as the zygote sees it."""

    def __init__(self, rid, job, t_recv, tmpdir, mode="cpu_interpreter"):
        opts = job.get("options") or {}
        self.id, self.job, self.t_recv, self.tmpdir = rid, job, t_recv, tmpdir
        self.timeout_s = protocol.positive(opts.get("timeout_s"), protocol.TIMEOUT_S)
        # The compile budget: active time until the candidate's first call returns (its
        # import, JIT compile and autotune, and the reference's load alongside); an
        # absent or 0 option is the mode's default. None: no budget (a task check has
        # no candidate).
        self.compile_budget_s = None if job.get("task_check") else \
            precompile.budget_s(opts, mode)
        self.compiled = False
        self.memory_limit = protocol.positive(opts.get("memory_limit_mb"), 32768.0) * (1 << 20)
        self.output_limit = protocol.positive(opts.get("output_limit_bytes"), 1 << 20)
        self.pid = None
        self.rec_r = self.grant_w = None
        self.reader = protocol.LineReader(CHILD_LINE_LIMIT)
        self.t_fork = None
        self.started_t = None          # the child's own monotonic timestamp at its first instruction
        self.stage = "startup"
        self.stage_t = None            # when it entered its stage (the zygote's clock)
        self.slow_logged = False
        self.share_key = None          # its task's key in the shared store (kgharness.refstore), once told
        self.unstuck_logged = False    # the zygote continued processes of it left stopped (Zygote.unstick)
        # In its precompile stage (Zygote.ahead on): only the candidate's compile-only child
        # works, with no GPU device file and at idle CPU priority, so it is not stopped
        # for other evaluations' windows (kgharness.precompile).
        self.ahead = False
        self.verdict = None
        self.kill_reason = None        # (status, feedback) once the zygote decided to kill it
        self.lock_stats = {}           # seconds: wait, shared_held, exclusive_held (gpulock)
        self.pids = set()              # the evaluation's processes at the last scan
        self.by_role = {}              # role -> (pids, rss) at the last scan
        # A verdict counts only with this nonce: candidate code shares the child's process
        # and could write a record of its own on the pipe.
        self.nonce = os.urandom(16).hex()
        self.forged = None             # why a record on the pipe was not the judge's
        self.runners = {}              # role -> pid, as the judge reported them
        self.frozen_since = None       # stopped while another evaluation is timed
        self.frozen_s = 0.0
        self.host = None               # the reference host its judge inherited (kgharness.refhost)

    def active_s(self, now, waiting_since=None):
        """Seconds the evaluation has run, not counting waits for the GPU lock or time
        spent stopped while another evaluation held it."""
        waiting = now - waiting_since if waiting_since is not None else 0.0
        frozen = watch.frozen_s(self, now, waiting_since)
        waits = self.lock_stats.get("wait", 0.0) + self.lock_stats.get("mem_wait", 0.0)
        return now - self.t_fork - waits - waiting - frozen

    def leaders(self):
        return {self.pid} | set(self.runners.values())

    def loading_host(self):
        """The host this evaluation loads and uses as its reference: stopped and continued
        with it, never killed with it."""
        h = self.host
        return h.pid if h is not None and h.creator is self and h.state == "loading" else None


class Zygote:
    def __init__(self, mode, device, evaluator, tmp_base, sandbox_info, in_fd=IN_FD, out_fd=OUT_FD,
                 memory_budget_mb=0.0, peers=None, share_mb=0.0):
        self.mode, self.device, self.evaluator = mode, device, evaluator
        self.sandbox_info = sandbox_info
        self.outcomes = outcome.Outcomes(mode, device, sandbox_info)
        self.in_fd, self.out_fd = in_fd, out_fd
        self.base, self.base_lock = basedir.make(tmp_base)
        for path in basedir.sweep(tmp_base, self.base):
            log(f"removed {path}: the base of a zygote that is gone")
        # Search but not read for others: a runner that dropped to an unprivileged uid
        # reaches its own directory below, and cannot list its neighbours'.
        os.chmod(self.base, 0o711)
        self.children = {}             # id -> Child
        self.by_pid, self.by_fd = {}, {}
        self.lock = gpulock.GpuLock(self._grant)
        # Other zygotes on this GPU (kgharness.gpupeers): a local holder's window opens
        # once they have stopped; while one of theirs is open, ours are stopped.
        self.peers = peers
        self.pending = self.pending_since = None   # holder whose window waits for the peers
        self.peer_stopped = False
        # Admission by device memory (GPU mode; a budget of 0 admits everything at once).
        self.mem = admission.Admission(memory_budget_mb, self._grant_mem) if memory_budget_mb > 0 else None
        if self.mem is not None:
            self.mem.squeeze = self.squeeze
        self.svc_fd = None             # the judge service's control socket, polled for its answers
        self.trim_sent = None          # when the last trim went to the judge service, until it answers
        self.trim_next = 0.0           # no trim before this (the zygote's clock)
        if self.mem is not None and os.environ.get(ADMISSION_LOG_ENV):
            self.mem.trace = AdmissionLog(os.environ[ADMISSION_LOG_ENV], memory_budget_mb)
        self.reader = protocol.LineReader()
        self.poll = select.poll()
        self.stopping = False
        self.next_tick = 0.0
        self.svc = judgesvc.Service(mode, device, int(share_mb * (1 << 20)))
        self.hosts = refhost.Hosts(mode, device, self.base, self.mem, log) \
            if refhost.enabled(mode, share_mb) else None
        self.groups = {}               # procs.scan's last {leader: (pids, rss)}
        self.stopped = set()           # processes stopped by a signal at the last scan
        self.launchers = None          # kgharness.launchers.Builder once the trusted cache exists
        self.ahead = precompile.through_windows()

    def start_service(self):
        """Fork the judge service (at start, and again if it dies)."""
        pid = self.svc.start(close_fds=self.own_fds())
        self.svc_fd = self.svc.ctrl.fileno()
        self.poll.register(self.svc_fd, select.POLLIN)
        self.trim_sent = None
        log(f"judge service started (pid {pid})")

    def own_fds(self):
        """The zygote's descriptors that a process it forks must close: Go's pipes, the
        signal wakeup pipe (once it exists), the judge service's control socket, the
        peers' lock files and its base's (a flock belongs to the open file: a child
        holding one could release or take the GPU for this zygote, or let its base be
        swept), the admission log, and every running evaluation's pipes."""
        fds = [self.in_fd, self.out_fd, getattr(self, "wake_r", None), getattr(self, "wake_w", None),
               self.base_lock]
        if self.mem is not None and isinstance(self.mem.trace, AdmissionLog):
            fds.append(self.mem.trace.f.fileno())
        if self.peers is not None:
            fds += self.peers.fds()
        if self.svc.ctrl is not None:
            fds.append(self.svc.ctrl.fileno())
        if self.hosts is not None:
            fds += self.hosts.fds()
        for c in self.children.values():
            fds += [c.rec_r, c.grant_w]
        return [fd for fd in fds if fd is not None]

    # ---- plumbing -------------------------------------------------------
    def send(self, rec):
        try:
            protocol.write(self.out_fd, rec)
        except OSError as e:           # Go is gone: nothing left to serve
            log(f"fd {self.out_fd} closed ({e}); shutting down")
            self.stopping = True

    def install_signals(self):
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_r, False)
        os.set_blocking(self.wake_w, False)
        signal.set_wakeup_fd(self.wake_w, warn_on_full_buffer=False)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, self._on_term)
        try:  # orphaned grandchildren come to us, not to init: the watchdog can kill them
            import ctypes
            ctypes.CDLL(None).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        except Exception as e:
            log(f"subreaper unavailable: {e}")
        os.set_blocking(self.in_fd, False)
        self.poll.register(self.in_fd, select.POLLIN)
        self.poll.register(self.wake_r, select.POLLIN)

    def _on_term(self, *_):
        self.stopping = True

    # ---- main loop ------------------------------------------------------
    def serve(self):
        self.install_signals()
        while not self.stopping:
            idle = not self.children and not (self.hosts is not None and self.hosts.by_key)
            timeout = None if idle else max(0, int((self.next_tick - time.monotonic()) * 1000))
            if self.peers is not None and (self.children or self.peers.state != self.peers.IDLE):
                timeout = min(timeout if timeout is not None else 1 << 30, int(self.peers.poll_s() * 1000))
            try:
                events = self.poll.poll(timeout)
            except InterruptedError:
                events = []
            for fd, _ in events:
                if fd == self.in_fd:
                    self.read_input()
                elif fd == self.wake_r:
                    self._drain(self.wake_r)
                elif fd == self.svc_fd:
                    self.read_service()
                elif fd in self.by_fd:
                    self.read_child(self.by_fd[fd])
            self.reap()
            self.peer_step()
            if self.launchers is not None:
                self.launchers.hold(self.timing())
                self.launchers.step(self.own_fds)
            if time.monotonic() >= self.next_tick:
                self.watchdog()
                self.next_tick = time.monotonic() + TICK_S
        self.shutdown()

    def read_input(self):
        try:
            data = os.read(self.in_fd, 1 << 20)
        except BlockingIOError:
            return
        if not data:
            self.stopping = True
            return
        for line in self.reader.feed(data):
            if line is protocol.LineReader.TOO_LONG:
                self.send(protocol.error(f"record longer than {protocol.MAX_LINE} bytes"))
                continue
            try:
                rec = protocol.decode_inbound(line)
            except protocol.ProtocolError as e:
                self.send(protocol.error(e.message, e.id))
                continue
            if rec["type"] == "shutdown":
                self.stopping = True
                return
            self.start(rec["id"], rec["job"], time.monotonic())

    # ---- children -------------------------------------------------------
    def start(self, rid, job, t_recv):
        if rid in self.children:
            self.send(protocol.error("an eval with this id is already running", rid))
            return
        try:
            tmpdir = tempfile.mkdtemp(prefix="job-", dir=self.base)
            os.chmod(tmpdir, 0o711)
        except OSError as e:
            self.send(protocol.record("result", rid, verdict=self.outcomes.fallback(
                job, "harness_error", f"could not create the temp dir: {e}")))
            return
        child = Child(rid, job, t_recv, tmpdir, self.mode)
        fds = []
        try:
            rec_r, rec_w = os.pipe()
            fds += [rec_r, rec_w]
            grant_r, grant_w = os.pipe()
            fds += [grant_r, grant_w]
            host = self.hosts.for_job(job) if self.hosts is not None else None
            close = [fd for fd in self.own_fds() if host is None or fd != host.sock.fileno()] + [rec_r, grant_w]
            svc = self.svc.connect()
            svc_fd = svc.detach() if svc is not None else None
            if svc_fd is not None:
                fds.append(svc_fd)
            sys.stdout.flush()
            sys.stderr.flush()
            child.t_fork = time.monotonic()
            pid = os.fork()
        except OSError as e:
            for fd in fds:
                os.close(fd)
            shutil.rmtree(tmpdir, ignore_errors=True)
            self.send(protocol.record("result", rid, verdict=self.outcomes.fallback(
                job, "harness_error", f"fork failed: {e}")))
            return
        if pid == 0:
            from . import child as childmod    # loaded in main(); never returns
            childmod.run(job, self.evaluator, self.mode, tmpdir, rec_w, grant_r, close, self.device,
                         child.nonce, svc_fd=svc_fd,
                         host=(host.sock.fileno(), host.pid) if host is not None else None)
        os.close(rec_w)
        os.close(grant_r)
        if svc_fd is not None:
            os.close(svc_fd)
        os.set_blocking(rec_r, False)
        os.set_blocking(grant_w, False)
        child.pid, child.rec_r, child.grant_w = pid, rec_r, grant_w
        child.host = host
        self.children[rid] = child
        self.by_pid[pid] = child
        self.by_fd[rec_r] = child
        self.poll.register(rec_r, select.POLLIN)
        holder = self.lock.held_by()
        self.peer_step()
        if holder is not None or self.peer_stopped:   # another evaluation is being timed: wait, stopped
            watch.freeze([child], holder, time.monotonic(), lambda: None)
        self.send(protocol.record("started", rid, pid=pid))

    def read_child(self, child):
        while child.rec_r is not None:
            try:
                data = os.read(child.rec_r, 65536)
            except BlockingIOError:
                return
            if not data:     # every writer closed; the exit itself comes by SIGCHLD
                self.poll.unregister(child.rec_r)
                del self.by_fd[child.rec_r]
                os.close(child.rec_r)
                child.rec_r = None
                return
            for line in child.reader.feed(data):
                self.child_record(child, line)

    def child_record(self, child, line):
        try:
            rec = json.loads(line) if line is not protocol.LineReader.TOO_LONG else None
        except ValueError:
            rec = None
        if not isinstance(rec, dict):
            return           # garbage from a child is ignored; its verdict decides
        kind = rec.get("type")
        if kind == "stage" and isinstance(rec.get("name"), str):
            child.stage, child.stage_t = rec["name"][:64], time.monotonic()
            if rec["name"] == "setup" and isinstance(rec.get("t"), float) and child.started_t is None:
                child.started_t = rec["t"]
            if rec["name"] == "precompile" and self.ahead:
                child.ahead = True
                watch.thaw([child], time.monotonic(), self.waiting)
        elif kind == "precompiled":
            # Back from the compile: from here it may reach the GPU, so while a window is
            # open it stops before it reads the answer.
            child.ahead = False
            if self.timing():
                watch.freeze([child], None, time.monotonic(), self.scan)
            self._tell(child, b"\x01")
        elif kind == "compiled":
            child.compiled = True
        elif kind == "lock":
            self.lock.request(child)
        elif kind == "unlock":
            self.release(child)
        elif kind == "reserve":
            mb = rec.get("mb") if isinstance(rec.get("mb"), (int, float)) else 0.0
            if self.mem is None:
                self._grant_mem(child, mb, False)
            elif rec.get("contexts") is True:     # its runners' contexts alone, ahead of the rest
                self.mem.contexts(child, mb)
            else:
                key = admission.task_key(child.job)
                later = rec.get("later_mb") if isinstance(rec.get("later_mb"), (int, float)) else 0.0
                without = rec.get("without_mb") if isinstance(rec.get("without_mb"), (int, float)) else 0.0
                host_mb = rec.get("host_mb") if isinstance(rec.get("host_mb"), (int, float)) else 0.0
                host = child.host.key if child.host is not None and host_mb > 0 else None
                self.mem.request(child, self.mem.need(key, mb), key=key,
                                 later=self.mem.later(key, later) if later else 0.0,
                                 without=self.mem.hosted(key, without) if without else 0.0,
                                 host=host, hosted=self.mem.hosted(key, host_mb) if host else 0.0)
        elif kind == "reserve_less":
            mb = rec.get("mb") if isinstance(rec.get("mb"), (int, float)) else 0.0
            if self.mem is not None and mb > 0:
                self.mem.less(child, self.mem.hosted(admission.task_key(child.job), mb))
        elif kind == "host_ask":
            ask = self.hosts.ask(child, child.host, rec.get("shared") is True) if self.hosts is not None \
                else refhost.ASK_NONE
            self._tell(child, bytes([ask]))
        elif kind == "host_ok":
            if self.hosts is not None:
                self.hosts.ok(child, child.host, rec.get("mb"))
        elif kind == "host_mem":
            if self.hosts is not None:
                self.hosts.measured(child.host, rec.get("mb"))
        elif kind == "reserve_more":
            if self.mem is None:
                self._grant_mem(child, 0.0, False)
            else:
                self.mem.more(child)
        elif kind == "launchers":
            if self.launchers is not None:
                self.launchers.offer(rec.get("signatures"))
        elif kind == "measured":
            if self.mem is not None:
                self.mem.measured(admission.task_key(child.job), rec.get("mb"))
        elif kind == "share_key":
            key = rec.get("key")
            if isinstance(key, str) and 0 < len(key) <= 64 and key.isalnum():
                child.share_key = key
        elif kind == "stored":
            if self.mem is not None:
                self.mem.stored(rec.get("mb"), rec.get("version"))
        elif kind == "runner" and rec.get("role") in ("reference", "candidate") and \
                isinstance(rec.get("pid"), int) and len(child.runners) < 2:
            child.runners.setdefault(rec["role"], rec["pid"])
        elif kind == "verdict":
            if rec.get("nonce") != child.nonce:
                child.forged = "a verdict record without the judge's nonce arrived on the result pipe"
            elif child.verdict is not None:
                child.forged = "two verdict records arrived on the result pipe"
            else:
                child.verdict = rec.get("verdict")

    def _grant(self, child):
        """Give child the timing lock: first stop every other evaluation on this GPU (the
        peers' too: then the grant waits for peer_step)."""
        if self.peers is not None and not self.peers.owns():
            self.peers.want()
            self.pending, self.pending_since = child, time.monotonic()
            self.peer_step()
            return True
        return self._open_window(child, True)

    def _open_window(self, child, exclusive):
        now = time.monotonic()
        watch.freeze(list(self.children.values()), child, now, self.scan)
        watch.thaw([child], now, self.waiting)    # stopped with the rest while the peers were timing
        if self.launchers is not None:
            self.launchers.hold(True)
        if self.hosts is not None:
            self.hosts.lend(child, child.host)
        # Inside the holder's window (its lock_exclusive_held): stopping the others and
        # rescanning their processes.
        child.lock_stats["freeze"] = child.lock_stats.get("freeze", 0.0) + time.monotonic() - now
        # 3: the window opens although a peer did not stop its evaluations (gpupeers)
        return self._tell(child, b"\x01" if exclusive else b"\x03")

    def peer_step(self):
        """Follow the other zygotes on this GPU: stop while one times, go on after, open a
        pending window once they have stopped."""
        if self.peers is None:
            return
        act = self.peers.tick(bool(self.children))
        now = time.monotonic()
        if act == "stop":
            watch.freeze(list(self.children.values()), None, now, self.scan)
            self.peer_stopped = True
        elif act == "go":
            watch.thaw(list(self.children.values()), now, self.waiting)
            self.peer_stopped = False
        elif isinstance(act, tuple):
            child, self.pending = self.pending, None
            self.peer_stopped = False
            if child is None:
                self.peers.release()
                return
            child.lock_stats["wait"] = child.lock_stats.get("wait", 0.0) + now - self.pending_since
            if not self._open_window(child, act[1]):
                self.release(child)

    def timing(self):
        """Whether a timing window is open on this GPU (ours, or a peer's: ours stopped)."""
        return self.lock.held_by() is not None or self.peer_stopped or self.pending is not None

    def waiting(self, child):
        """When child began waiting for the timing lock or device memory, or None."""
        since = [self.lock.waiting_since(child), self.mem.waiting_since(child) if self.mem is not None else None,
                 self.pending_since if self.pending is child else None]
        since = [t for t in since if t is not None]
        return min(since) if since else None

    def _grant_mem(self, child, mb, alone):
        """Tell a judge its device memory is reserved: one byte (2: and no other evaluation
        runs; 4: without its reference, which it asks for later), then the MiB granted (8
        bytes, a double): a pipe write this short is atomic."""
        kind = b"\x02" if alone else b"\x04" if self.mem is not None and self.mem.owes(child) else b"\x01"
        return Zygote._tell(child, kind + struct.pack("<d", float(mb)))

    @staticmethod
    def _tell(child, data):
        """Write a grant on the judge's grant pipe (short: atomic)."""
        try:
            os.write(child.grant_w, data)
            return True
        except OSError:
            return False     # it died (or stopped reading): next in line

    def release(self, child):
        """Child no longer holds (or waits for) the lock: continue the others first, so the
        next holder, stopped while it waited, can read its grant."""
        holder = self.lock.held_by() is child
        if self.hosts is not None:
            self.hosts.take_back(child, child.host)
        if self.pending is child:
            self.pending = None
        if holder and self.peers is None:
            watch.thaw(list(self.children.values()), time.monotonic(), self.waiting)
        elif holder:
            # Ours stay stopped until `run` is held again: a peer waiting for it could
            # otherwise open its window while they run.
            self.peers.release()
            self.peer_stopped = True
            self.peer_step()
        self.lock.release(child)

    def scan(self):
        """Refresh every child's processes and their split by role."""
        leaders = self.hosts.pids() if self.hosts is not None else set()
        if self.launchers is not None:
            leaders |= self.launchers.pids()
        for c in self.children.values():
            leaders |= c.leaders()
        self.stopped = set()
        groups, strays = procs.scan(os.getpid(), leaders, self.stopped)
        self.groups = groups
        for c in self.children.values():
            c.by_role, c.pids = watch.roles(c, groups)
        return [pid for pid in strays if pid != self.svc.pid]

    # ---- the shared store gives way to evaluations waiting for memory ----------------------
    def squeeze(self, short_mb):
        """Admission's hook: the next reservation lacks short_mb MiB, no more than the shared
        store holds. The judge service evicts entries of tasks no evaluation here is
        working on (kgharness.refstore.Store.trim) and answers with the store's new size.
        Kept until something needs the room, an entry saves a later group of its task
        the reference work; waiting for it, 4 of row_l3_norm's evaluations ran where 5
        fitted beside 25 GiB of finished tasks' outputs (H200, 2026-12-03)."""
        now = time.monotonic()
        if self.trim_sent is not None and now - self.trim_sent < TRIM_ANSWER_S:
            return
        if now < self.trim_next or self.mem is None:
            return
        target = max(0.0, self.mem.store_mb - short_mb) * (1 << 20)
        keep = {c.share_key for c in self.children.values() if c.share_key}
        if self.svc.trim(target, keep):
            self.trim_sent = now

    def read_service(self):
        rep = self.svc.reply()
        if rep is None:
            return
        if rep.get("eof"):          # it is exiting: reap restarts it
            self._forget_service()
            return
        self.trim_sent, self.trim_next = None, time.monotonic() + TRIM_GAP_S
        if self.mem is not None:
            if isinstance(rep.get("evicted"), int) and rep["evicted"] > 0:
                self.mem.trace_note("trimmed", evicted=rep["evicted"])
            self.mem.stored(rep.get("mb"), rep.get("version"))

    def _forget_service(self):
        if self.svc_fd is not None:
            with contextlib.suppress(KeyError, ValueError):
                self.poll.unregister(self.svc_fd)
            self.svc_fd = None
        self.trim_sent = None

    def reap(self):
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid == self.svc.pid:
                log(f"judge service exited (status {status}); restarting it")
                self._forget_service()
                self.svc.gone()
                if not self.stopping:
                    self.start_service()
                continue
            if self.hosts is not None and self.hosts.reaped(pid):
                continue
            if self.launchers is not None and self.launchers.reaped(pid, status):
                continue
            child = self.by_pid.get(pid)
            if child is not None:
                self.finish(child, status)

    def kill(self, child, status, feedback, task_error=""):
        if child.kill_reason is None:
            child.kill_reason = (status, feedback, task_error)
            if status in ("timeout", "compile_timeout"):   # where it was stuck, for whoever looks
                log(f"job {child.id} {status} in stage {child.stage}: {procs.describe(child.pids | child.leaders())}")
        procs.kill_group(child.pid, child.pids)
        for leader in child.leaders():
            procs.kill_group(leader)

    def watchdog(self):
        if not self.children and not (self.hosts is not None and self.hosts.by_key):
            return
        now = time.monotonic()
        for pid in self.scan():   # escaped a finished evaluation and came to us: kill
            procs.kill_pid(pid)
        if self.hosts is not None:
            waiting = self.mem is not None and any(now - q[2] > 1.0 for q in self.mem.queue)
            self.hosts.tick(now, waiting, self.groups, (procs.MAX_PROCS, HOST_RSS_LIMIT),
                            [c.host for c in self.children.values() if c.host is not None])
        self.unstick()
        if self.mem is not None and self.mem.queue and self.trim_sent is None and now >= self.trim_next:
            self.mem.poke()    # a trim that freed nothing (an entry asked for just now) is tried again
        for child in list(self.children.values()):
            if child.kill_reason:
                procs.kill_group(child.pid, child.pids)   # a fork bomb may outrun one kill
                continue
            active = child.active_s(now, self.waiting(child))
            if active > child.timeout_s:
                self.kill(child, "timeout", f"the evaluation exceeded its {child.timeout_s:g} s "
                          f"wall-clock limit during stage {child.stage}")
                continue
            budget = child.compile_budget_s
            if budget is not None and not child.compiled and active > budget:
                self.kill(child, "compile_timeout", f"loading and compiling the kernel (its import, Triton "
                          f"JIT and autotune, until its first call returned) exceeded the {budget:g} s "
                          f"compile budget (compile_timeout_s) during stage {child.stage}; fewer autotune "
                          f"configs or a smaller kernel compile faster")
                continue
            if child.ahead and not child.slow_logged and now - (child.stage_t or now) > SLOW_PRECOMPILE_S:
                child.slow_logged = True
                log(f"job {child.id} in stage precompile for {now - child.stage_t:.0f} s (load "
                    f"{procs.load()}): {procs.describe(child.pids, limit=24)}")
            bad = watch.check(child, child.by_role, child.output_limit)
            if bad:
                self.kill(child, *bad)

    def unstick(self):
        """Continue what is stopped in an evaluation that should be running (neither stopped
        for a window nor the lock's holder, whose judge stops its own runners). A process
        that forks while its group is stopped and continued gets both signals and stays
        stopped (Linux hands a fork's child the group signals sent during the fork, and
        a continue does not cancel a stop still queued for it): on an H200, with reference
        hosts on, 7 of 448 heavy evaluations sat 45 s in their precompile stage with the
        compile-only child stopped at birth, after the zygote stopped an evaluation for
        a window and at once continued it (its stage record said precompile)."""
        holder = self.lock.held_by()
        for child in self.children.values():
            if child.frozen_since is not None or child is holder:
                continue
            left = child.pids & self.stopped
            if not left:
                continue
            if not child.unstuck_logged:     # once: a candidate may stop its own processes at will
                child.unstuck_logged = True
                log(f"job {child.id}: {len(left)} process(es) left stopped in stage {child.stage}, "
                    f"continued: {procs.describe(left)}")
            for pid in left:
                try:
                    os.kill(pid, signal.SIGCONT)
                except OSError:
                    pass

    def finish(self, child, status):
        self.release(child)
        if not child.kill_reason:
            child.kill_reason = watch.output_check(child, child.output_limit)
        for leader in child.leaders():                # leftovers of the evaluation die with it
            procs.kill_group(leader, child.pids)
        if child.rec_r is not None:
            self.read_child(child)
            if child.rec_r is not None:
                self.poll.unregister(child.rec_r)
                del self.by_fd[child.rec_r]
                os.close(child.rec_r)
        os.close(child.grant_w)
        del self.children[child.id]
        del self.by_pid[child.pid]
        verdict = self.outcomes.for_child(child, status)
        if self.hosts is not None:
            self.hosts.finished(child, child.host)
        if self.mem is not None:
            self.mem.release(child)
            self.mem.learn(admission.task_key(child.job), verdict, oom=verdict.get("retry") == "gpu_oom")
        shutil.rmtree(child.tmpdir, ignore_errors=True)
        self.send(protocol.record("result", child.id, verdict=verdict))

    def shutdown(self):
        for child in list(self.children.values()):
            self.kill(child, "harness_error", f"the zygote shut down while the evaluation was "
                      f"running (stage {child.stage})")
        for child in list(self.children.values()):
            try:
                _, status = os.waitpid(child.pid, 0)
            except ChildProcessError:
                status = 0
            self.finish(child, status)
        self.svc.stop()
        if self.hosts is not None:
            self.hosts.shutdown()
        if self.launchers is not None:
            self.launchers.shutdown()
        shutil.rmtree(self.base, ignore_errors=True)

    @staticmethod
    def _drain(fd):
        try:
            while os.read(fd, 4096):
                pass
        except OSError:
            pass


SHARE_ENV = "KERNELGATE_SHARE_REFERENCE"
# The store's cap, of a GPU's memory budget. Admission counts only what the store holds
# (kgharness.admission.stored): a fixed fifth taken out of the budget cut a 2 x 16 heavy
# group's evaluations admitted at once from 8.1 to 6.4 (H200, 956cfdf), where its two
# tasks' entries held 10 of the 26 GiB.
SHARE_FRACTION = 0.2
SHARE_DEFAULT_MB = {"gpu": 8192.0, "cpu_interpreter": 1024.0}   # when the budget is unknown


def share_budget_mb(mode, memory_budget_mb=0.0, explicit=None):
    """MiB for the shared reference store (device memory on a GPU, host memory on a CPU):
    the flag, else off when $KERNELGATE_SHARE_REFERENCE says so, else the mode's default."""
    if explicit is not None:
        return max(0.0, float(explicit))
    if os.environ.get(SHARE_ENV, "on").strip().lower() in ("0", "off", "false", "no"):
        return 0.0
    if mode == "gpu" and memory_budget_mb > 0:
        return SHARE_FRACTION * memory_budget_mb
    return SHARE_DEFAULT_MB[mode]


def main(argv=None):
    ap = argparse.ArgumentParser(prog="kgharness.zygote")
    ap.add_argument("--mode", choices=("gpu", "cpu_interpreter"), default="cpu_interpreter")
    ap.add_argument("--device-index", type=int, default=0)
    ap.add_argument("--evaluator", default="kgharness.evaluate:evaluate")
    ap.add_argument("--tmp-base", default=None)
    ap.add_argument("--memory-budget-mb", type=float, default=0.0,
                    help="GPU memory evaluations may reserve together (0: no admission)")
    ap.add_argument("--peers-key", default=None,
                    help="name of the GPU other zygotes share (default: its PCI bus id in GPU mode, "
                         "none in CPU mode); zygotes with one key take turns at timing")
    ap.add_argument("--peers-dir", default=None, help=f"where the peers' lock files live ({gpupeers.LOCK_DIR})")
    ap.add_argument("--share-reference-mb", type=float, default=None,
                    help="the judge service's store of shared reference work (kgharness.refstore); 0: "
                         "off. Default: $KERNELGATE_SHARE_REFERENCE (off/on), on: a fifth of the memory "
                         "budget on a GPU at most (what it holds counts against what evaluations reserve), "
                         "1 GiB in CPU mode")
    args = ap.parse_args(argv)
    share_mb = share_budget_mb(args.mode, args.memory_budget_mb, args.share_reference_mb)
    if args.mode == "cpu_interpreter":
        os.environ["TRITON_INTERPRET"] = "1"     # must precede the first triton import
    else:
        os.environ.pop("TRITON_INTERPRET", None)
        # One hardware work queue per CUDA context (every process forked from here inherits
        # it): 16 contexts created at once took 1.2 s instead of 3.1 s on the H200, and
        # context creation serialises in the driver. The cost: work a process puts on
        # several streams shares one queue (PROTOCOL.md). An operator's setting wins.
        os.environ.setdefault("CUDA_DEVICE_MAX_CONNECTIONS", "1")
    versions = startup.import_stack(args.mode)
    evaluator = startup.load_evaluator(args.evaluator)   # imported before fork: children need no file access for it
    from . import child  # noqa: F401 - loaded once, after the env and triton are set up, not per fork
    # Runners drop to an unprivileged uid where that uid can read the interpreter and,
    # on a GPU, still initialise CUDA (the probe tries both in a forked child).
    sb = sandbox.probe(args.tmp_base, drop_uid=True, cuda=args.mode == "gpu")
    device = "cuda:0" if args.mode == "gpu" else "cpu"
    if args.peers_key:
        peers = gpupeers.Peers(args.peers_key, args.peers_dir)
    else:
        peers = gpupeers.for_device(device, lock_dir=args.peers_dir) if args.mode == "gpu" else None
    z = Zygote(args.mode, device, evaluator, args.tmp_base, sb, memory_budget_mb=args.memory_budget_mb,
               peers=peers, share_mb=share_mb)
    if args.mode == "gpu":
        from . import warmup
        cache = os.path.join(z.base, "trusted-triton-cache")
        why = warmup.fill(cache)
        if why is None:
            os.environ[warmup.ENV] = cache    # children inherit it and copy from it
            if launchers.enabled():
                z.launchers = launchers.Builder(cache, os.path.join(z.base, "launcher-staging"), log)
        else:
            log(f"trusted Triton cache not filled ({why}); children compile from scratch")
    z.start_service()
    z.send(protocol.hello(os.getpid(), versions["python"], versions["torch"], versions["triton"],
                          args.mode, device, {k: sb.get(k) for k in
                                              ("netns", "landlock", "rlimits", "mountns", "uid_drop", "level", "detail")}))
    bad = precompile.invalid()
    if bad:
        log(f"{precompile.ENV}={bad!r} is none of {', '.join(precompile.KINDS)}: taken as auto")
    log(f"ready: mode={args.mode} device-index={args.device_index} sandbox={sb.get('level')} "
        f"{sb.get('detail', '')}; shared reference store {share_mb:g} MiB; "
        f"precompile {'on' if precompile.wanted(args.mode == 'gpu') else 'off'}; "
        f"shared launchers {'on' if z.launchers is not None else 'off'}")
    z.serve()
    return 0


if __name__ == "__main__":
    sys.exit(main())
