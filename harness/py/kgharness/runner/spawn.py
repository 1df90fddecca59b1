"""Forking a runner from the judge, and the judge's handle on it.

The judge forks both runners before it initialises CUDA (a process that forked after
CUDA init cannot use the GPU). A runner is its own process group (the judge stops,
continues and kills it as a unit), keeps no file descriptor but its channel, works in
its own subdirectory of the evaluation's temp dir (the other runner's files are not
its to read), writes its output to a capped file there, and applies the strictest
sandbox before it reads a request. It never returns into the judge's code: every path
ends in os._exit.
"""

import faulthandler
import os
import signal
import sys
import time

from .. import channel
from ..sandbox import procfs, runenv, walls
from . import handler
from .warmup import seed_private

ROLES = ("reference", "candidate")


class RunnerGone(Exception):
    """The runner stopped answering: it exited, was killed, or closed its channel."""

    def __init__(self, role, status, why):
        super().__init__(why)
        self.role, self.status, self.why = role, status, why


class RunnerProc:
    """The judge's handle: ask, stop/continue, kill, and why it is gone."""

    def __init__(self, role, pid, chan, tmpdir):
        self.role, self.pid, self.chan, self.tmpdir = role, pid, chan, tmpdir
        self.status = None          # waitpid status once reaped
        self.cpu_s = None           # its CPU time (user + system) once reaped
        self.stopped = False

    def request(self, op, fds=(), **fields):
        """Send a request; `reply(op, seq)` collects its answer."""
        try:
            return self.chan.request(op, fds, **fields)
        except channel.ChannelClosed:
            raise self.gone() from None

    def reply(self, op, seq):
        try:
            return self.chan.reply(op, seq)
        except channel.ChannelClosed:
            raise self.gone() from None

    def ask(self, op, fds=(), **fields):
        return self.reply(op, self.request(op, fds, **fields))

    def gone(self):
        """Reap the runner (it closed its channel) and say how it ended."""
        deadline = time.monotonic() + 1.0
        while self.status is None and time.monotonic() < deadline:
            pid, status = self._wait()
            if pid:
                break
            time.sleep(0.005)
        if self.status is None:   # alive but silent: it closed its channel on purpose
            self.kill()
            return RunnerGone(self.role, None, "closed its channel without exiting")
        return RunnerGone(self.role, self.status, describe_exit(self.status))

    def _wait(self):
        try:
            pid, status, ru = os.wait4(self.pid, os.WNOHANG)
        except ChildProcessError:
            return self.pid, 0
        if pid:
            self.status, self.cpu_s = status, ru.ru_utime + ru.ru_stime
        return pid, status

    def stop(self):
        if not self.stopped:
            if not _signal_group(self.pid, signal.SIGSTOP):
                # The judge must be able to stop its runners (timing is interleaved with
                # the other side stopped): a sandbox that forbids it is a harness bug.
                raise RuntimeError(f"the judge may not signal its {self.role} runner")
            self.stopped = True

    def cont(self):
        if self.stopped:
            _signal_group(self.pid, signal.SIGCONT)
            self.stopped = False

    def kill(self):
        _signal_group(self.pid, signal.SIGKILL)
        deadline = time.monotonic() + 5.0
        while self.status is None and time.monotonic() < deadline:
            pid, _ = self._wait()
            if not pid:
                time.sleep(0.002)
        try:
            self.chan.sock.close()
        except OSError:
            pass


def _signal_group(pid, sig):
    """False only when the signal was refused (a runner that is gone needs none)."""
    try:
        os.killpg(pid, sig)
        return True
    except ProcessLookupError:
        return True
    except OSError:
        try:
            os.kill(pid, sig)
            return True
        except ProcessLookupError:
            return True
        except OSError:
            return False


def describe_exit(status):
    if os.WIFEXITED(status):
        return f"exited with code {os.WEXITSTATUS(status)}"
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = f"signal {sig}"
        return f"was killed by {name}"
    return "ended"


def start(role, job, mode, device, tmpdir):
    """Fork one runner; returns its RunnerProc. The caller must not have initialised CUDA."""
    rdir = os.path.join(tmpdir, role)
    os.mkdir(rdir, 0o700)
    judge_end, runner_end = channel.pair()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = procfs.fork_runner(mode)
    if pid == 0:
        run_runner(role, job, mode, device, rdir, runner_end)   # never returns
    runner_end.close()
    return RunnerProc(role, pid, channel.Channel(judge_end), rdir)


def run_runner(role, job, mode, device, rdir, sock):
    """A forked runner's life (a reference host's too: kgharness.zygote.refhosts). Never returns."""
    code = 70
    try:
        os.setpgid(0, 0)
        keep = sock.fileno()
        os.closerange(3, keep)
        os.closerange(keep + 1, 65536)
        for sig in (signal.SIGCHLD, signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, signal.SIG_DFL)
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)
        os.chdir(rdir)
        redirect_output(rdir)
        faulthandler.enable(file=sys.stderr, all_threads=True)
        private_env(rdir)
        seed_private(os.environ["TRITON_CACHE_DIR"])
        end = channel.RunnerEnd(sock)
        # The strictest walls: the judge's private mounts (shared), a /proc that shows
        # no other process, its own network namespace, Landlock on its own directory, an
        # unprivileged uid where the probe found that works, no capabilities, and
        # everything it forks kept in its process group (the group the judge stops while
        # the other side is timed); then none of the harness's settings in its environment.
        t0 = time.monotonic()
        held = walls.apply(rdir, job.get("options") or {}, drop_uid=True, keep_group=True, own_proc=True)
        runenv.drop_harness()
        r = handler.Runner(role, job, mode, device, rdir, taint=end.taint)
        r.sandbox_ms = round((time.monotonic() - t0) * 1e3, 3)
        r.sandbox = {k: held.get(k) for k in ("level", "detail", "uid", "uid_note")}
        handler.serve(end, r)
        code = 0
    except BaseException:
        try:
            import traceback
            traceback.print_exc()
        except BaseException:
            pass
    finally:
        for f in (sys.stdout, sys.stderr):
            try:
                f.flush()
            except BaseException:
                pass
        os._exit(code)


def redirect_output(d):
    """fd 0 <- /dev/null; fd 1, 2 -> d/output.log (line-buffered, so a crash keeps its tail)."""
    null = os.open("/dev/null", os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    out = os.open(os.path.join(d, "output.log"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    os.dup2(out, 1)
    os.dup2(out, 2)
    os.close(out)
    sys.stdout = open(1, "w", buffering=1, encoding="utf-8", errors="replace", closefd=False)
    sys.stderr = open(2, "w", buffering=1, encoding="utf-8", errors="replace", closefd=False)
    sys.stdin = open(0, "r", closefd=False)


def private_env(d):
    """Per-process HOME, TMPDIR and Triton cache: nothing compiled here is ever loaded by
    another evaluation (the cache_poison defence)."""
    cache = os.path.join(d, "triton-cache")
    os.makedirs(cache, mode=0o700, exist_ok=True)
    for k, v in (("TRITON_CACHE_DIR", cache), ("TRITON_HOME", d), ("HOME", d), ("TMPDIR", d)):
        os.environ[k] = v
    import tempfile
    tempfile.tempdir = None   # the zygote may have cached its own TMPDIR
    try:
        # Triton 3.x reads its knobs at first use, but a cached value would win.
        from triton import knobs
        knobs.cache.dir = cache
        knobs.cache.home_dir = d
    except Exception:
        pass
