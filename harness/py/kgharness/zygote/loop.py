"""The zygote's loop: Go's records in, one single-use judge forked per job, one `result`
out per accepted `eval`, whatever the evaluation did (docs/protocol.md).

Records from Go arrive on fd 3, ours leave on fd 4. The loop is single-threaded (poll +
a SIGCHLD wakeup fd) because it forks: a thread in the zygote would leave its locks held
in every child. What it does for the evaluations in flight lives beside it: their judges'
records (records), the timing windows (windows), device memory and the judge service
(memory), the watchdog (watchdog), reference hosts (refhosts). CUDA is never initialised
here: each runner initialises its own context, and the judge service holds the one all
judges share.
"""

import os
import select
import shutil
import signal
import sys
import tempfile
import time

from .. import procs, protocol
from . import admission, basedir, memory, outcome, records, refhosts, watch, watchdog, windows
from .child import Child
from .startup import log
from ..runner import precompile

IN_FD, OUT_FD = 3, 4
TICK_S = 0.1                  # watchdog period (10 Hz)
PR_SET_CHILD_SUBREAPER = 36


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
        self.windows = windows.Windows(self, peers)
        self.memory = memory.Memory(self, mode, device, memory_budget_mb, share_mb)
        self.reader = protocol.LineReader()
        self.poll = select.poll()
        self.stopping = False
        self.next_tick = 0.0
        self.hosts = refhosts.Hosts(mode, device, self.base, self.memory.admission, log) \
            if refhosts.enabled(mode, share_mb) else None
        self.watchdog = watchdog.Watchdog(self)
        self.records = records.Records(self)
        self.launchers = None          # kgharness.runner.launchers.Builder once the trusted cache exists
        self.ahead = precompile.through_windows()

    def own_fds(self):
        """The zygote's descriptors that a process it forks must close: Go's pipes, the
        signal wakeup pipe (once it exists), the judge service's control socket, the
        peers' lock files and its base's (a flock belongs to the open file: a child
        holding one could release or take the GPU for this zygote, or let its base be
        swept), the admission log, and every running evaluation's pipes."""
        fds = [self.in_fd, self.out_fd, getattr(self, "wake_r", None), getattr(self, "wake_w", None),
               self.base_lock]
        if self.windows.peers is not None:
            fds += self.windows.peers.fds()
        fds += self.memory.fds()
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
        peers = self.windows.peers
        while not self.stopping:
            idle = not self.children and not (self.hosts is not None and self.hosts.by_key)
            timeout = None if idle else max(0, int((self.next_tick - time.monotonic()) * 1000))
            if peers is not None and (self.children or peers.state != peers.IDLE):
                timeout = min(timeout if timeout is not None else 1 << 30, int(peers.poll_s() * 1000))
            try:
                events = self.poll.poll(timeout)
            except InterruptedError:
                events = []
            for fd, _ in events:
                if fd == self.in_fd:
                    self.read_input()
                elif fd == self.wake_r:
                    self._drain(self.wake_r)
                elif fd == self.memory.service_fd:
                    self.memory.read_service()
                elif fd in self.by_fd:
                    self.records.read(self.by_fd[fd])
            self.reap()
            self.windows.peer_step()
            if self.launchers is not None:
                self.launchers.hold(self.windows.timing())
                self.launchers.step(self.own_fds)
            if time.monotonic() >= self.next_tick:
                self.watchdog.tick()
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
            svc = self.memory.service.connect()
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
            from ..judge import process    # loaded in main(); never returns
            process.run(job, self.evaluator, self.mode, tmpdir, rec_w, grant_r, close, self.device,
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
        holder = self.windows.lock.held_by()
        self.windows.peer_step()
        if holder is not None or self.windows.peer_stopped:   # another evaluation is being timed: wait, stopped
            watch.freeze([child], holder, time.monotonic(), lambda: None)
        self.send(protocol.record("started", rid, pid=pid))

    def reap(self):
        service = self.memory.service
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid == service.pid:
                log(f"judge service exited (status {status}); restarting it")
                self.memory.forget_service()
                service.gone()
                if not self.stopping:
                    self.memory.start_service()
                continue
            if self.hosts is not None and self.hosts.reaped(pid):
                continue
            if self.launchers is not None and self.launchers.reaped(pid, status):
                continue
            child = self.by_pid.get(pid)
            if child is not None:
                self.finish(child, status)

    def finish(self, child, status):
        self.windows.release(child)
        if not child.kill_reason:
            child.kill_reason = watch.output_check(child, child.output_limit)
        for leader in child.leaders():                # leftovers of the evaluation die with it
            procs.kill_group(leader, child.pids)
        if child.rec_r is not None:
            self.records.read(child)
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
        adm = self.memory.admission
        if adm is not None:
            adm.release(child)
            adm.learn(admission.task_key(child.job), verdict, oom=verdict.get("retry") == "gpu_oom",
                      code=admission.code_key(child.job))
        shutil.rmtree(child.tmpdir, ignore_errors=True)
        self.send(protocol.record("result", child.id, verdict=verdict))

    def shutdown(self):
        for child in list(self.children.values()):
            self.watchdog.kill(child, "harness_error", f"the zygote shut down while the evaluation was "
                               f"running (stage {child.stage})")
        for child in list(self.children.values()):
            try:
                _, status = os.waitpid(child.pid, 0)
            except ChildProcessError:
                status = 0
            self.finish(child, status)
        self.memory.service.stop()
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
