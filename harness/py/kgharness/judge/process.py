"""Everything in a forked judge between fork() and the evaluation, and after it.

The zygote forks one judge per job (kgharness.judge). The judge is single-use: it
isolates itself (own process group, private temp dir, output to a file, a network
namespace and Landlock), forks its two runners (which sandbox themselves further:
they keep the capabilities the judge has not dropped, so they can), evaluates, writes
one `verdict` record and _exits. It never returns into the zygote's loop: every path
ends in os._exit. It is the subreaper of its runners' descendants, so a process a
candidate forks and orphans is still the judge's to kill.
"""

import contextlib
import ctypes
import faulthandler
import os
import signal
import struct
import sys
import time
import traceback

from .. import pipe, procs, protocol
from ..runner import spawn, warmup
from ..sandbox import walls
from ..verdict import add_flag, finalize, new_verdict, truncate
from .context import Context
from .hostproc import HostProc

PR_SET_CHILD_SUBREAPER = 36


class PipeContext(Context):
    """The judge's side of its private pipes to the zygote: records out (kgharness.pipe),
    grant bytes in."""

    def __init__(self, rec_fd, grant_fd, mode, device, tmpdir, sandbox_info, nonce="", svc_fd=None, host=None):
        self.rec_fd = rec_fd
        self.host = host              # (fd, pid): the reference host this judge inherited, if any
        self.svc_fd = svc_fd          # this judge's connection to the judge service, if any
        self._nonce = nonce
        self.grant_fd = grant_fd
        self.mode = mode
        self.device = device
        self.tmpdir = tmpdir
        self.sandbox = sandbox_info
        self.last_stage = "startup"
        self._held = False
        self.shared_gpu = False

    def send(self, kind, **fields):
        protocol.write(self.rec_fd, pipe.record(kind, **fields))

    def stage(self, name):
        self.last_stage = str(name)
        self.send("stage", name=self.last_stage, t=time.monotonic())

    def compiled(self):
        self.send("compiled")

    def spawn(self, role, job):
        r = spawn.start(role, job, self.mode, self.device, self.tmpdir)
        # The zygote accounts the runner's processes (memory, count) and stops them with
        # the rest of this evaluation while another evaluation is timed.
        self.send("runner", role=role, pid=r.pid)
        return r

    def seal(self):
        """The judge's Landlock, after its runners are forked (see _isolate)."""
        if self.sandbox.get("landlock"):
            return
        # Signals stay allowed: the runners, forked before this layer, are outside it, and
        # the judge stops, continues and kills them.
        ok, msg = walls.apply_landlock(self.tmpdir, private=self.sandbox.get("mountns", False),
                                       scoped=walls.SCOPE_ABSTRACT_UNIX)
        self.sandbox["landlock"] = ok
        full = ok and self.sandbox.pop("_ok", False)
        self.sandbox["level"] = "full" if full else "partial"
        if not ok:
            self.sandbox["detail"] = "; ".join(x for x in (self.sandbox.get("detail"), msg) if x)

    def buffer_ops(self):
        """The judge service's operations when the zygote runs one (no CUDA context in
        this process), else this process's own."""
        from . import bufferops
        if self.svc_fd is None:
            return bufferops.Local(self.mode, self.device)
        import socket
        sock, self.svc_fd = socket.socket(fileno=self.svc_fd), None
        return bufferops.Remote(sock)

    def send_verdict(self, verdict):
        self.send("verdict", nonce=self._nonce, verdict=verdict)

    def reserve(self, mb, contexts=False):
        """Wait until the zygote admits this evaluation's device memory (kgharness.zygote.admission):
        (MiB granted, at least mb; True when it runs alone on the GPU). contexts: only its
        runners' CUDA contexts, ahead of the rest."""
        fields = {"mb": round(float(mb), 1)}
        if contexts:
            fields["contexts"] = True
        granted, kind = self._granted("reserve", **fields)
        return granted, kind == pipe.ALONE

    def reserve_first(self, mb, later, host_mb=0.0):
        fields = {"mb": round(float(mb), 1), "later_mb": round(float(later), 1)}
        if host_mb:
            fields["host_mb"] = round(float(host_mb), 1)
        granted, kind = self._granted("reserve", **fields)
        return granted, kind == pipe.ALONE, kind == pipe.OWED

    def reserve_more(self):
        return self._granted("reserve_more")[0]

    def reserve_hosted(self, mb, ref_mb):
        granted, kind = self._granted("reserve", mb=round(float(mb), 1), without_mb=round(float(ref_mb), 1))
        return granted, kind == pipe.ALONE

    def reserve_less(self, ref_mb):
        self.send("reserve_less", mb=round(float(ref_mb), 1))

    def inherits_host(self):
        return self.host is not None

    def host_ask(self, shared):
        if self.host is None:
            return pipe.ASK_NONE
        self.send("host_ask", shared=bool(shared))
        b = os.read(self.grant_fd, 1)
        if not b:
            raise RuntimeError("reference host: the zygote closed the grant pipe")
        return b[0]

    def host_proc(self):
        fd, pid = self.host
        return HostProc(os.dup(fd), pid)

    def host_ok(self, mb):
        self.send("host_ok", mb=round(float(mb), 1))

    def host_mem(self, mb):
        self.send("host_mem", mb=round(float(mb), 1))

    def _granted(self, kind, **fields):
        """Send a reservation record and wait for its grant: (MiB, the kind byte)."""
        self.send(kind, **fields)
        b = b""
        while len(b) < 9:
            chunk = os.read(self.grant_fd, 9 - len(b))
            if not chunk:
                raise RuntimeError("memory admission: the zygote closed the grant pipe")
            b += chunk
        return struct.unpack("<d", b[1:])[0], b[:1]

    def precompiled(self):
        self.send("precompiled")
        if not os.read(self.grant_fd, 1):
            raise RuntimeError("precompile: the zygote closed the grant pipe")

    def launchers(self, signatures):
        self.send("launchers", signatures=signatures)

    def measured(self, mb):
        self.send("measured", mb=round(float(mb), 1))

    def stored(self, mb, version):
        self.send("stored", mb=round(float(mb), 1), version=int(version))

    def uses_share(self, key):
        self.send("share_key", key=str(key))

    @contextlib.contextmanager
    def timing_lock(self):
        if self._held:
            raise RuntimeError("timing lock requested twice")
        t0 = time.monotonic()
        self.send("lock", mode="exclusive")
        # One byte from the zygote means the lock is ours; EOF means it is gone (it kills
        # us on shutdown), so timing without the lock would be wrong.
        b = os.read(self.grant_fd, 1)
        if not b:
            raise RuntimeError("timing lock: the zygote closed the grant pipe")
        self.shared_gpu = b == pipe.SHARED_GPU
        self._held = True
        try:
            yield time.monotonic() - t0
        finally:
            self._held = False
            self.send("unlock")


def _fallback(mode, device, status, feedback, flag=None):
    v = new_verdict(mode, device)
    v["status"] = status
    v["feedback"] = truncate(feedback, 2048)
    if flag:
        add_flag(v, flag)
    return finalize(v)


def _isolate(tmpdir, options):
    """The judge's first walls: private /tmp and /dev/shm (a mount namespace its runners
    share and that dies with them), no network, rlimits. Landlock comes in seal(), once
    the runners are forked: Landlock layers stack, and a judge's layer (whose /proc rule
    names the judge's own pid) would deny a runner's CUDA driver its own /proc entries
    (error 304, seen on the H200). The judge keeps its capabilities for the same reason:
    its runners build their own walls (a network namespace, a uid drop) from them.

    The zygote's trusted Triton cache (kgharness.runner.warmup, under the host's /tmp) is bound
    back read-only: the runners copy it at their start, and without it (before 2026-12-03)
    the tmpfs hid it and each runner rebuilt Triton's driver stubs and every launcher."""
    keep = walls.read_paths(tmpdir=tmpdir)[0]
    trusted = os.environ.get(warmup.ENV)
    if trusted and os.path.isdir(trusted):
        keep = [*keep, trusted]
    mnt = walls.private_mounts(tmpdir, keep=keep)
    net, rl = walls.apply_netns(), walls.apply_rlimits(options)
    parts = (mnt, net, rl)
    return {"mountns": mnt[0], "netns": net[0], "rlimits": rl[0], "landlock": False,
            "level": "partial", "detail": "; ".join(p[1] for p in parts if not p[0]), "_ok": all(p[0] for p in parts)}


def run(job, evaluator, mode, tmpdir, rec_fd, grant_fd, close_fds, device, nonce="", svc_fd=None, host=None):
    """Entry point right after fork() in the judge. Never returns."""
    t_start = time.monotonic()
    ctx = None
    code = 0
    try:
        os.setsid()   # own session and process group: the zygote kills -pgid
        procs.leave_zygote(close_fds)
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)
        with contextlib.suppress(Exception):
            ctypes.CDLL(None).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        os.chdir(tmpdir)
        spawn.redirect_output(tmpdir)
        faulthandler.enable(file=sys.stderr, all_threads=True)
        os.environ.update(HOME=tmpdir, TMPDIR=tmpdir)
        ctx = PipeContext(rec_fd, grant_fd, mode, device, tmpdir, None, nonce, svc_fd, host)
        # The zygote measures fork latency against this timestamp.
        ctx.send("stage", name="setup", t=t_start)
        ctx.sandbox = _isolate(tmpdir, job.get("options") or {})
        setup_ms = (time.monotonic() - t_start) * 1000.0
        verdict = _call(evaluator, job, ctx)
        if isinstance(verdict, dict) and isinstance(verdict.setdefault("stage_ms", {}), dict):
            verdict["stage_ms"].setdefault("setup", round(setup_ms, 3))
        ctx.send_verdict(verdict)
    except BaseException:
        code = 70
        try:
            if ctx is not None:
                ctx.send_verdict(_fallback(mode, device, "harness_error",
                                           "harness judge setup failed:\n" + traceback.format_exc()))
                code = 0
            else:
                traceback.print_exc()
        except BaseException:
            pass
    finally:
        for f in (sys.stdout, sys.stderr):
            with contextlib.suppress(BaseException):
                f.flush()
        os._exit(code)


def _call(evaluator, job, ctx):
    """Run the evaluator; an exception escaping it still becomes a verdict."""
    try:
        return evaluator(job, ctx)
    except BaseException:
        return _fallback(ctx.mode, ctx.device, "harness_error",
                         "the evaluator raised:\n" + traceback.format_exc())
