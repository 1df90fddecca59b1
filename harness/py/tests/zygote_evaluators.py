"""Scripted evaluators for the zygote tests: job["code"] says what to do.

`code` is one command line, e.g. "ok", "segv", "lock 0.3", "read /etc/hostname".
Commands that observe something return a verdict carrying a "probe" dict (an
extra field: readers of the protocol ignore unknown fields). Everything used
here is imported at module level, in the zygote, before the sandbox exists.
"""

import ctypes
import json
import os
import signal
import socket
import sys
import time

import torch
import triton
import triton.language as tl

from kgharness.runner import spawn, warmup
from kgharness.verdict import finalize, new_verdict


@triton.jit
def _add_one(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=mask) + 1, mask=mask)


def _verdict(ctx, status="correct", **probe):
    v = new_verdict(ctx.mode, ctx.device)
    v["status"] = status
    v["compiled"] = True
    v["stage_ms"] = {"total": 1.0}
    v = finalize(v)
    v["probe"] = probe
    return v


def _try(fn):
    try:
        return "ok: " + repr(fn())[:200]
    except BaseException as e:   # the point is to report what the sandbox did
        return f"error: {type(e).__name__}: {e}"


def _state(pid):
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0]


def evaluate(job, ctx):
    words = job["code"].split()
    cmd, args = words[0], words[1:]
    if cmd == "triton":
        # A private Triton cache started from the zygote's trusted one, as a runner's is
        # (kgharness.runner.spawn): Triton's home is otherwise the zygote's ~ (read when triton
        # was imported), where this uid-dropped process may not write.
        spawn.private_env(ctx.tmpdir)
        warmup.seed_private(os.environ["TRITON_CACHE_DIR"])
    ctx.seal()   # a judge that forks no runner: all its walls at once
    ctx.stage("correctness")
    if cmd == "ok":
        return _verdict(ctx, sandbox=ctx.sandbox, cwd=os.getcwd(), tmpdir=ctx.tmpdir,
                        env={k: os.environ.get(k) for k in ("HOME", "TMPDIR", "TRITON_CACHE_DIR",
                                                           "TRITON_HOME")},
                        t_eval=time.monotonic(), pid=os.getpid(), pgid=os.getpgid(0))
    if cmd == "triton":          # a real Triton kernel on the child's device (compiled in GPU mode)
        t0 = time.monotonic()
        x = torch.zeros(1000, device=ctx.device)
        _add_one[(4,)](x, 1000, BLOCK=256)
        total = float(x.sum().item())
        return _verdict(ctx, "correct" if total == 1000.0 else "incorrect", total=total,
                        ms=(time.monotonic() - t0) * 1000, t_eval=time.monotonic(),
                        cuda=torch.cuda.is_initialized(), sandbox=ctx.sandbox)
    if cmd == "segv":
        ctypes.string_at(0)
    if cmd == "abort":
        os.abort()
    if cmd == "exit0":
        print("bye", flush=True)
        os._exit(0)
    if cmd == "exit3":
        os._exit(3)
    if cmd == "sysexit":
        sys.exit(0)
    if cmd == "hang":
        ctx.stage(args[0] if args else "timing")
        while True:
            time.sleep(1)
    if cmd == "print":           # a candidate runner that prints N bytes
        return _as_runner(ctx, "candidate", lambda: _print(int(args[0])))
    if cmd == "memhog":          # a runner that grows by 64 MiB steps, up to a cap
        role = args[1] if len(args) > 1 else "candidate"
        return _as_runner(ctx, role, lambda: _memhog(int(args[0]) << 20))
    if cmd == "forkbomb":        # a candidate runner that forks N sleepers, one escaping with setsid
        return _as_runner(ctx, "candidate", lambda: _forkbomb(int(args[0]) if args else 200))
    if cmd == "busy":            # record the wall clock every 10 ms for args[0] seconds (is it stopped?)
        ctx.stage("correctness")
        t_end, ticks = time.time() + float(args[0]), []
        while time.time() < t_end:
            ticks.append(time.time())
            time.sleep(0.01)
        return _verdict(ctx, ticks=ticks)
    if cmd == "ahead":           # args[0] s of ticks in the precompile stage, args[1] s after it
        ctx.stage("precompile")
        t_end, ticks = time.time() + float(args[0]), []
        while time.time() < t_end:
            ticks.append(time.time())
            time.sleep(0.01)
        t_ask = time.time()
        ctx.precompiled()
        t_back, after = time.time(), []
        t_end = t_back + float(args[1])
        while time.time() < t_end:
            after.append(time.time())
            time.sleep(0.01)
        return _verdict(ctx, ticks=ticks, ask=t_ask, back=t_back, after=after)
    if cmd == "trusted":         # what the judge's namespace shows of the trusted Triton cache
        p = os.environ.get("KERNELGATE_TRUSTED_TRITON_CACHE")
        seen = sorted(os.listdir(p)) if p and os.path.isdir(p) else None
        return _verdict(ctx, seen=seen, write=_try(lambda: open(os.path.join(p, "planted"), "w").close()),
                        mountns=ctx.sandbox.get("mountns"))
    if cmd == "lock":            # hold the timing lock for args[0] seconds
        hold = float(args[0])
        ctx.stage("timing")
        with ctx.timing_lock() as waited:
            t0 = time.time()
            time.sleep(hold)
            t1 = time.time()
        return _verdict(ctx, lock=[t0, t1], waited=waited)
    if cmd == "selfstop":        # processes of ours left stopped: outside the lock, then inside it
        def stopped_child():
            pid = os.fork()
            if pid == 0:
                os.kill(os.getpid(), signal.SIGSTOP)
                os._exit(0)
            return pid

        def exited(pid, within):
            t_end = time.monotonic() + within
            while time.monotonic() < t_end:
                if os.waitpid(pid, os.WNOHANG)[0] == pid:
                    return True
                time.sleep(0.02)
            return False
        t0 = time.monotonic()
        continued = exited(stopped_child(), 10.0)     # the zygote's watchdog continues it
        waited = time.monotonic() - t0
        with ctx.timing_lock():
            pid = stopped_child()
            time.sleep(0.6)
            held = _state(pid)                         # its judge's own stop in its window: left
            os.kill(pid, signal.SIGCONT)
            exited(pid, 10.0)
        return _verdict(ctx, continued=continued, waited=waited, held=held)
    if cmd == "reserve":         # ask for args[0] MiB of device memory, hold it args[1] seconds
        t0 = time.time()         # (args[2]: then say the task used that many MiB)
        granted, alone = ctx.reserve(float(args[0]))
        t1 = time.time()
        if len(args) > 2:
            ctx.measured(float(args[2]))
        time.sleep(float(args[1]))
        return _verdict(ctx, granted=[t1, time.time()], waited=t1 - t0, alone=alone, mb=granted)
    if cmd == "early":           # args[0] MiB of contexts first, then args[1] MiB, held args[2] s
        t0 = time.time()
        ctx.reserve(float(args[0]), contexts=True)
        t1 = time.time()
        granted, alone = ctx.reserve(float(args[1]))
        t2 = time.time()
        time.sleep(float(args[2]))
        return _verdict(ctx, contexts=[t0, t1], granted=[t2, time.time()], alone=alone, mb=granted)
    if cmd == "later":           # args[0] MiB, args[1] of them later; held args[2] s, then the rest args[3] s
        t0 = time.time()
        granted, alone, owed = ctx.reserve_first(float(args[0]), float(args[1]))
        t1 = time.time()
        time.sleep(float(args[2]))
        t2 = time.time()
        more = ctx.reserve_more()
        t3 = time.time()
        time.sleep(float(args[3]))
        return _verdict(ctx, granted=[t1, time.time()], waited=t1 - t0, alone=alone, mb=granted,
                        owed=owed, more=[t2, t3], more_mb=more)
    if cmd == "stored":          # the shared store holds args[0] MiB as of change args[1]
        ctx.stored(float(args[0]), int(args[1]))
        return _verdict(ctx)
    if cmd == "publish":         # an entry of args[1] MiB under key args[0] in the judge service's store;
        ops = ctx.buffer_ops()   # with args[2]: named as this evaluation's task, held args[2] s
        n = int(float(args[1]) * (1 << 20))
        spec = [{"kind": "tensor", "dtype": "uint8", "shape": [n], "device": "cpu"}]
        bid, _, fds = ops.alloc(n)
        for fd in fds:
            os.close(fd)
        sid = ops.snapshot(bid, spec)
        claimed = ops.shared(args[0]).get("publish")
        rep = ops.share(args[0], {"spec": spec}, [sid], [])
        ctx.stored(rep["bytes"] / (1 << 20), rep["version"])
        if len(args) > 2:
            ctx.uses_share(args[0])
            time.sleep(float(args[2]))
        return _verdict(ctx, claimed=claimed, taken=rep["taken"], t=time.time())
    if cmd == "nested":          # a lock request while holding one: must fail, not hang
        with ctx.timing_lock():
            with ctx.timing_lock():
                pass
    if cmd == "forge":           # candidate-style forgery: a verdict record of its own, then exit
        rec = {"type": "verdict", "verdict": _verdict(ctx, "correct")}
        os.write(ctx.rec_fd, (json.dumps(rec) + "\n").encode())
        os._exit(0)
    if cmd == "lockdie":         # die holding the lock
        ctx.stage("timing")
        with ctx.timing_lock():
            time.sleep(float(args[0]) if args else 0.2)
            os.kill(os.getpid(), signal.SIGKILL)
    if cmd == "net":             # connect to 127.0.0.1:PORT and to a public address
        port = int(args[0])
        local = _try(lambda: socket.create_connection(("127.0.0.1", port), timeout=2).close())
        public = _try(lambda: socket.create_connection(("1.1.1.1", 80), timeout=2).close())
        # UDP is outside Landlock's TCP rules: only the network namespace stops it.
        udp = _try(lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("1.1.1.1", 53)))
        ifaces = _try(lambda: [ln.split(":")[0].strip() for ln in open("/proc/net/dev").readlines()[2:]])
        return _verdict(ctx, local=local, public=public, udp=udp, ifaces=ifaces)
    if cmd == "read":
        return _verdict(ctx, **{p: _try(lambda p=p: open(p, "rb").read(64)) for p in args})
    if cmd == "listdir":
        return _verdict(ctx, **{p: _try(lambda p=p: os.listdir(p)[:5]) for p in args})
    if cmd == "write":
        return _verdict(ctx, **{p: _try(lambda p=p: open(p, "w").write("pwned")) for p in args})
    if cmd == "killparent":      # try to signal the zygote
        return _verdict(ctx, kill=_try(lambda: os.kill(os.getppid(), signal.SIGKILL)))
    if cmd == "raise":
        raise ValueError("evaluator bug")
    return _verdict(ctx, "harness_error", unknown=cmd)


def _as_runner(ctx, role, fn):
    """Fork a process the zygote will hold to a runner's limits (as the judge's runners are),
    run fn there with its output in the runner's log, and wait for it."""
    d = os.path.join(ctx.tmpdir, role)
    os.makedirs(d, exist_ok=True)
    pid = os.fork()
    if pid == 0:
        try:
            os.setpgid(0, 0)
            out = os.open(os.path.join(d, "output.log"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            os.dup2(out, 1)
            os.dup2(out, 2)
            sys.stdout = open(1, "w", buffering=1, closefd=False)
            fn()
        finally:
            os._exit(0)
    ctx.send("runner", role=role, pid=pid)
    _, status = os.waitpid(pid, 0)
    return _verdict(ctx, "correct", wait_status=status)


def _print(total):
    chunk, wrote = "x" * 65535 + "\n", 0
    while wrote < total:
        sys.stdout.write(chunk)
        wrote += len(chunk)


def _memhog(cap):    # stops at a cap so a broken watchdog fails the test, not the box
    hog = []
    while sum(map(len, hog)) < cap:
        hog.append(b"x" * (64 << 20))
        time.sleep(0.01)


def _forkbomb(n):
    pids = []
    for i in range(n):
        try:
            pid = os.fork()
        except OSError:
            break
        if pid == 0:
            if i == 0:
                os.setsid()
            time.sleep(60)
            os._exit(0)
        pids.append(pid)
        print("PID", pid, flush=True)   # as we go: the watchdog may stop us mid-loop
    time.sleep(60)
