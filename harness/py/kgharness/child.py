"""Everything in a forked child between fork() and evaluate(), and after it.

The child is single-use: it isolates itself (own process group, private temp
dir and compile caches, output to a file, the sandbox), runs the evaluator with
a PipeContext, writes one `verdict` record and _exits. It never returns into
the zygote's loop, whatever happens: every path ends in os._exit.
"""

import contextlib
import faulthandler
import os
import resource
import signal
import sys
import time
import traceback

from . import protocol, sandbox
from .warmup import seed_private
from .context import Context
from .verdict import add_flag, finalize, new_verdict, truncate


class PipeContext(Context):
    """The child's side of the private pipes: stage/lock/unlock/verdict out, grant bytes in."""

    def __init__(self, rec_fd, grant_fd, mode, device, tmpdir, sandbox_info, nonce=""):
        self.rec_fd = rec_fd
        # Only the harness's own verdict carries it: a record forged by candidate code
        # (which shares this process and could write to rec_fd) is told apart by the zygote.
        self._nonce = nonce
        self.grant_fd = grant_fd
        self.mode = mode
        self.device = device
        self.tmpdir = tmpdir
        self.sandbox = sandbox_info
        self.last_stage = "startup"
        self._held = None

    def send(self, rec):
        protocol.write(self.rec_fd, rec)

    def stage(self, name):
        self.last_stage = str(name)
        self.send({"type": "stage", "name": self.last_stage, "t": time.monotonic()})

    def taint(self, flag, detail):
        self.send({"type": "taint", "flag": str(flag), "detail": str(detail)[:200]})

    def send_verdict(self, verdict):
        self.send({"type": "verdict", "nonce": self._nonce, "verdict": verdict})

    def timing_lock(self):
        return self._lock("exclusive")

    def gpu_lock(self):
        return self._lock("shared")

    @contextlib.contextmanager
    def _lock(self, mode):
        if self._held:
            # The zygote ignores a holder's second request: waiting for it would hang.
            raise RuntimeError(f"GPU lock: {mode} requested while {self._held} is held")
        t0 = time.monotonic()
        self.send({"type": "lock", "mode": mode})
        # One byte from the zygote means the lock is ours; EOF means it is gone
        # (it kills us on shutdown), so timing without the lock would be wrong.
        while True:
            try:
                b = os.read(self.grant_fd, 1)
                break
            except InterruptedError:
                continue
        if not b:
            raise RuntimeError("timing lock: the zygote closed the grant pipe")
        self._held = mode
        # A holder gets the CPU first: a timed launch path must not queue behind other
        # children's compiles, and every moment a shared holder runs slowly is a moment
        # the GPU's next timing waits for it.
        if _niced:
            _set_nice(0)
        try:
            yield time.monotonic() - t0
        finally:
            if _niced:
                _set_nice(BACKGROUND_NICE)
            self._held = None
            self.send({"type": "unlock"})


BACKGROUND_NICE = 10
_niced = False   # set by _background_priority: only then does a lock holder renice
RLIMIT_NICE = getattr(resource, "RLIMIT_NICE", None)


def _set_nice(value):
    """Per-thread on Linux: the calling (launching) thread is the one that matters."""
    try:
        os.setpriority(os.PRIO_PROCESS, 0, value)
    except (OSError, AttributeError):
        pass


def _background_priority():
    """Run at a lower priority except while holding the GPU lock. RLIMIT_NICE (set while
    the child still has its capabilities) lets it come back to 0 without them; where it
    cannot be raised, the child stays at 0 rather than be stuck at the lower priority.
    Returns whether the background priority is in effect."""
    try:
        if RLIMIT_NICE is None:
            return False
        resource.setrlimit(RLIMIT_NICE, (20, 20))
    except (OSError, ValueError):
        return False
    global _niced
    _set_nice(BACKGROUND_NICE)
    _niced = True
    return True


def _redirect_output(tmpdir):
    """fd 0 <- /dev/null; fd 1, 2 -> tmpdir/output.log (line-buffered, so a crash keeps its tail)."""
    null = os.open("/dev/null", os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    out = os.open(os.path.join(tmpdir, "output.log"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    os.dup2(out, 1)
    os.dup2(out, 2)
    os.close(out)
    sys.stdout = open(1, "w", buffering=1, encoding="utf-8", errors="replace", closefd=False)
    sys.stderr = open(2, "w", buffering=1, encoding="utf-8", errors="replace", closefd=False)
    sys.stdin = open(0, "r", closefd=False)


def _private_env(tmpdir):
    """Per-evaluation HOME, TMPDIR and Triton cache: nothing compiled here is ever
    loaded by another evaluation (the cache_poison defence)."""
    cache = os.path.join(tmpdir, "triton-cache")
    os.makedirs(cache, mode=0o700, exist_ok=True)
    seed_private(cache)
    for k, v in (("TRITON_CACHE_DIR", cache), ("TRITON_HOME", tmpdir),
                 ("HOME", tmpdir), ("TMPDIR", tmpdir)):
        os.environ[k] = v
    import tempfile
    tempfile.tempdir = None   # the zygote may have cached its own TMPDIR
    try:
        # Triton 3.x reads its knobs at first use, but a cached value would win.
        from triton import knobs
        knobs.cache.dir = cache
        knobs.cache.home_dir = tmpdir
    except Exception:
        pass


def _fallback(mode, device, status, feedback, flag=None):
    v = new_verdict(mode, device)
    v["status"] = status
    v["feedback"] = truncate(feedback, 2048)
    if flag:
        add_flag(v, flag)
    return finalize(v)


def run(job, evaluator, mode, tmpdir, rec_fd, grant_fd, close_fds, device, nonce=""):
    """Entry point right after fork() in the child. Never returns."""
    t_start = time.monotonic()
    ctx = None
    code = 0
    try:
        os.setsid()   # own session and process group: the zygote kills -pgid
        for fd in close_fds:
            try:
                os.close(fd)
            except OSError:
                pass
        signal.set_wakeup_fd(-1)
        for sig in (signal.SIGCHLD, signal.SIGTERM, signal.SIGINT, signal.SIGPIPE):
            signal.signal(sig, signal.SIG_DFL if sig != signal.SIGPIPE else signal.SIG_IGN)
        os.chdir(tmpdir)
        _redirect_output(tmpdir)
        faulthandler.enable(file=sys.stderr, all_threads=True)
        _private_env(tmpdir)
        ctx = PipeContext(rec_fd, grant_fd, mode, device, tmpdir, None, nonce)
        # The zygote measures fork latency against this timestamp.
        ctx.send({"type": "stage", "name": "setup", "t": t_start})
        options = job.get("options") or {}
        _background_priority()
        ctx.sandbox = sandbox.apply(tmpdir, options)
        setup_ms = (time.monotonic() - t_start) * 1000.0
        verdict = _call(evaluator, job, ctx)
        if isinstance(verdict, dict):
            verdict.setdefault("stage_ms", {})
            if isinstance(verdict["stage_ms"], dict):
                verdict["stage_ms"].setdefault("setup", round(setup_ms, 3))
        ctx.send_verdict(verdict)
    except BaseException:
        code = 70
        try:
            if ctx is not None:
                ctx.send_verdict(_fallback(
                    mode, device, "harness_error",
                    "harness child setup failed:\n" + traceback.format_exc()))
                code = 0
            else:
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


def _call(evaluator, job, ctx):
    """Run the evaluator; an exception escaping it still becomes a verdict."""
    try:
        return evaluator(job, ctx)
    except SystemExit as e:
        # sys.exit() from candidate code that the evaluator did not catch: an
        # exit is never a success, it is the `exit` hack.
        return _fallback(ctx.mode, ctx.device, "reward_hack",
                         f"the candidate called sys.exit({e.code!r}) during {ctx.last_stage}", "exit")
    except KeyboardInterrupt:
        return _fallback(ctx.mode, ctx.device, "runtime_error",
                         f"KeyboardInterrupt during {ctx.last_stage}")
    except BaseException:
        return _fallback(ctx.mode, ctx.device, "harness_error",
                         "the evaluator raised:\n" + traceback.format_exc())
