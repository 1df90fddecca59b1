"""The judge service: one process per zygote that owns every judge's exchange buffers
and runs the judges' computations over them (kgharness.judge.bufferops).

On a GPU this is the one CUDA context that judges share: without it each evaluation
created three contexts (judge and two runners), and context creation serialises in
the driver (0.21 s each on the H200 with 16 at once), which bounded level2 throughput
below one evaluation per second. The zygote, which never initialises CUDA, forks the
service once at start; for each judge it forks, it makes a socket pair and hands one
end to the service (SCM_RIGHTS over the control socket), the other to the judge.

The service runs harness code only and talks only to judges, which run harness code
only: no runner can reach it (a runner's channel is to its judge). One thread per
judge; a judge's buffers are freed when its connection closes, however it ended. The
service exits when the zygote closes the control socket, and dies with it (PDEATHSIG).
"""

import array
import ctypes
import json
import os
import shutil
import signal
import socket
import sys
import tempfile
import threading
import traceback

from .. import channel, procs
from ..runner import feedback, warmup
from .startup import log

PR_SET_PDEATHSIG = 1


class Service:
    """The zygote's handle: start() forks it; connect() makes a judge's socket."""

    def __init__(self, mode, device, share_bytes=0):
        self.mode, self.device = mode, device
        self.share_bytes = int(share_bytes)    # the shared reference store's budget (kgharness.judge.refstore)
        self.pid, self.ctrl = None, None

    def start(self, close_fds=()):
        """Fork the service. The caller must not have initialised CUDA."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            ours.close()
            _main(theirs, self.mode, self.device, close_fds, self.share_bytes)   # never returns
        theirs.close()
        self.pid, self.ctrl = pid, ours
        return pid

    def connect(self):
        """A new judge connection: the judge's end (a socket), or None when the service
        is not running (the judge then works in its own process)."""
        if self.ctrl is None:
            return None
        judge_end, svc_end = channel.pair()
        try:
            self.ctrl.sendmsg([b"j"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [svc_end.fileno()]))])
        except OSError as e:
            log(f"judge service: cannot hand over a connection ({e})")
            judge_end.close()
            return None
        finally:
            svc_end.close()
        return judge_end

    def trim(self, target_bytes, keep):
        """Ask the service to shrink the shared store to target_bytes, keeping the entries
        of keep (its answer comes on the control socket: reply). False when not sent."""
        msg = b"t" + json.dumps({"target": int(target_bytes), "keep": sorted(keep)}).encode()
        if self.ctrl is None or len(msg) > CTRL_MAX:
            return False
        try:
            self.ctrl.send(msg)
        except OSError:
            return False
        return True

    def reply(self):
        """The service's answer to a trim ({"mb", "version", "evicted"}), {"eof": True} once
        the service has closed its end, or None."""
        try:
            data = self.ctrl.recv(CTRL_MAX, socket.MSG_DONTWAIT)
        except (OSError, AttributeError):
            return None
        if not data:
            return {"eof": True}
        try:
            rep = json.loads(data[1:]) if data[:1] == b"s" else None
        except ValueError:
            return None
        return rep if isinstance(rep, dict) else None

    def gone(self):
        """The service exited (the zygote reaped it): judges forked from now on work alone."""
        if self.ctrl is not None:
            self.ctrl.close()
        self.pid, self.ctrl = None, None

    def stop(self):
        if self.ctrl is not None:
            self.ctrl.close()
            self.ctrl = None


def _main(ctrl, mode, device, close_fds, share_bytes=0):
    code, cache = 70, None
    try:
        ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        procs.leave_zygote(close_fds)
        if mode == "gpu":
            cache = _private_triton_cache()
            import torch
            torch.cuda.init()
            torch.zeros(1, device=device)
        from ..judge import refstore
        refstore.configure(share_bytes)
        serve(ctrl, mode, device)
        code = 0
    except BaseException:
        traceback.print_exc()
    finally:
        if cache is not None:
            shutil.rmtree(os.path.dirname(cache), ignore_errors=True)
        sys.stderr.flush()
        os._exit(code)


def _private_triton_cache():
    """The service compiles its comparison kernel (kgharness.comparekernel) into a Triton
    cache of its own (a fresh 0700 directory, seeded from the zygote's trusted one): no
    candidate can put a compiled kernel where the judges' comparisons load theirs."""
    d = tempfile.mkdtemp(prefix="kg-judgesvc-")
    cache = os.path.join(d, "triton-cache")
    os.makedirs(cache, mode=0o700)
    os.environ["TRITON_CACHE_DIR"] = cache
    warmup.seed_private(cache)
    try:
        from triton import knobs   # a value Triton already read would win over the environment
        knobs.cache.dir = cache
    except Exception:   # noqa: BLE001
        pass
    return cache


class Gate:
    """While one judge holds the GPU's timing window, only its requests run here. The
    zygote stops every other judge, but a request one sent just before it was stopped
    would still run in this process, on the GPU, inside the holder's window."""

    def __init__(self):
        self.cv = threading.Condition()
        self.owner = None
        self.busy = 0          # requests of other judges running now

    def enter(self, who):
        with self.cv:
            while self.owner is not None and self.owner is not who:
                self.cv.wait()
            if self.owner is None:
                self.busy += 1
                return True
            return False        # the owner's own request: not counted

    def leave(self):
        with self.cv:
            self.busy -= 1
            self.cv.notify_all()

    def open(self, who):
        """Hold the gate for `who`; returns once other judges' requests have finished."""
        with self.cv:
            while self.owner is not None and self.owner is not who:
                self.cv.wait()
            self.owner = who
            while self.busy:
                self.cv.wait()

    def close(self, who):
        with self.cv:
            if self.owner is who:
                self.owner = None
                self.cv.notify_all()


GATE = Gate()
CTRL_MAX = 1 << 16       # a control message: b"j", or b"t" and its JSON (the keys to keep)


def trim(ctrl, payload, mode):
    """The zygote's request to shrink the shared store to {"target": bytes} keeping
    {"keep": [keys]}: evaluations wait for device memory that entries of finished tasks
    hold (kgharness.zygote.admission, squeeze). Runs through the gate, so never inside another
    judge's timing window (freeing device memory can synchronise the device). Answers
    b"s" and the store's size and version, whatever it evicted."""
    from ..judge import refstore
    evicted = 0
    try:
        req = json.loads(payload)
        target, keep = int(req["target"]), [k for k in req.get("keep") or () if isinstance(k, str)]
    except (ValueError, TypeError, KeyError):
        log(f"judge service: a trim request it cannot read: {payload[:80]!r}")
        target, keep = None, ()
    if target is not None:
        GATE.enter(trim)
        try:
            evicted = refstore.STORE.trim(target, keep)
            if evicted and mode == "gpu":
                import torch
                torch.cuda.empty_cache()   # the evicted outputs' blocks back to the device
        finally:
            GATE.leave()
    st = refstore.STORE.stats()
    try:
        ctrl.send(b"s" + json.dumps({"mb": round(st["bytes"] / (1 << 20), 1), "version": st["version"],
                                     "evicted": evicted}).encode())
    except OSError:
        pass


def serve(ctrl, mode, device):
    """Accept judge connections (b"j", a socket) and trim requests (b"t", JSON) from the
    control socket until it closes."""
    while True:
        fds = array.array("i")
        try:
            data, anc, _, _ = ctrl.recvmsg(CTRL_MAX, socket.CMSG_SPACE(4 * fds.itemsize))
        except OSError:
            return
        if not data:
            return
        if data[:1] == b"t":
            threading.Thread(target=trim, args=(ctrl, data[1:], mode), daemon=True).start()
            continue
        for level, kind, payload in anc:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds.frombytes(payload[:len(payload) - len(payload) % fds.itemsize])
        for fd in fds:
            sock = socket.socket(fileno=fd)
            threading.Thread(target=serve_judge, args=(sock, mode, device), daemon=True).start()


def serve_judge(sock, mode, device):
    """One judge's requests, one reply each, until it closes its end; then its buffers go."""
    from ..judge import bufferops   # torch: imported once the zygote has set up its environment
    chan = channel.Channel(sock)
    ops = bufferops.Local(mode, device)
    try:
        while True:
            try:
                req, fds = chan.recv()
            except (channel.ChannelClosed, channel.Malformed):
                return
            channel.close_all(fds)
            if req.get("op") == "window":
                # Bracket a timing window: [True] opens, [False] closes (docs/protocol.md).
                (GATE.open if (req.get("a") or [False])[0] is True else GATE.close)(chan)
                chan.send({"op": "window", "seq": req.get("seq"), "ok": True, "result": None})
                continue
            counted = GATE.enter(chan)
            try:
                rep, out_fds = handle(ops, req)
                if ops.gpu:
                    trim_cache()
            finally:
                if counted:
                    GATE.leave()
            try:
                chan.send(rep, out_fds)
            finally:
                channel.close_all(out_fds)
    except (channel.ChannelClosed, OSError):
        return
    finally:
        GATE.close(chan)
        ops.close()
        sock.close()


# What the service's allocator may keep cached beyond what it holds. Admission counts the
# judges' buffers and the shared store, not the service's cache: freed snapshots and the
# temporaries of its computations would otherwise stay on the GPU, outside every
# reservation, as large as the most that several judges' requests ever held at once.
CACHE_SLACK = 1 << 30


def trim_cache():
    """Give cached device memory back once more than CACHE_SLACK of it is unused (inside
    the request, so never in another judge's timing window: the gate counts it)."""
    import torch
    if torch.cuda.memory_reserved() - torch.cuda.memory_allocated() > CACHE_SLACK:
        torch.cuda.empty_cache()


def handle(ops, req):
    """(reply, fds) for one request."""
    op, seq = req.get("op"), req.get("seq")
    base = {"op": op, "seq": seq}
    a, k = req.get("a") or [], req.get("k") or {}
    if op not in ops.OPS or not isinstance(a, list) or not isinstance(k, dict):
        return dict(base, ok=False, error=f"unknown request {str(op)[:40]!r}"), ()
    try:
        out = getattr(ops, op)(*a, **k)
    except Exception as e:  # noqa: BLE001 - the judge hears why, and decides
        oom = feedback.is_device_oom(e) or "CUDA driver error 2" in str(e)
        return dict(base, ok=False, error=f"{type(e).__name__}: {e}"[:500], oom=oom), ()
    if op == "alloc":
        bid, handle_, fds = out
        return dict(base, ok=True, result={"id": bid, "handle": handle_}), fds
    return dict(base, ok=True, result=out), ()
