"""Probe, on a GPU host, the mechanisms the split harness (judge + runners) relies on.

    python3 scripts/measure/gpu_probe_ipc.py            # prints one JSON object per probe

1. Driver-API IPC: a parent (the judge) cuMemAlloc's a buffer, exports an IPC handle;
   a forked child (a runner) opens it, wraps it as a torch tensor through
   __cuda_array_interface__ (zero-copy?), writes; the parent reads what it wrote.
2. CUDA context cost: time and device memory of one more process's context.
3. Draining: a child queues ~200 ms of GPU work and is SIGSTOPped; how long until a
   spin probe in the parent runs at its idle speed (the judge's drain check).
Nothing here changes clocks or modes.
"""

import ctypes
import json
import os
import signal
import sys
import time


def emit(name, **kw):
    print(json.dumps(dict(probe=name, **kw)), flush=True)


class CAI:
    def __init__(self, ptr, nbytes):
        self.__cuda_array_interface__ = {"shape": (nbytes,), "typestr": "|u1", "data": (ptr, False),
                                         "version": 3, "strides": None}


class Handle(ctypes.Structure):
    _fields_ = [("reserved", ctypes.c_char * 64)]   # CUipcMemHandle, passed by value


def driver():
    lib = ctypes.CDLL("libcuda.so.1")
    return lib


def child_open(handle_hex, nbytes, w):
    import torch
    torch.zeros(1, device="cuda")
    lib = driver()
    h = Handle.from_buffer_copy(bytes.fromhex(handle_hex))
    p = ctypes.c_uint64()
    lib.cuIpcOpenMemHandle_v2.argtypes = [ctypes.POINTER(ctypes.c_uint64), Handle, ctypes.c_uint]
    rc = lib.cuIpcOpenMemHandle_v2(ctypes.byref(p), h, 1)
    out = {"open_rc": rc}
    if rc == 0:
        t = torch.as_tensor(CAI(p.value, nbytes), device="cuda")
        out["zero_copy"] = t.data_ptr() == p.value
        t.view(torch.float32).fill_(3.5)
        torch.cuda.synchronize()
    os.write(w, (json.dumps(out) + "\n").encode())
    os._exit(0)


def probe_ipc(drop_uid=False):
    r, w = os.pipe()
    hr, hw = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        os.close(hw)
        if drop_uid:   # a runner that dropped to nobody opens the judge's (root's) buffer
            import ctypes as _c
            os.setgroups([])
            os.setresgid(65534, 65534, 65534)
            os.setresuid(65534, 65534, 65534)
            _c.CDLL(None).prctl(4, 1, 0, 0, 0)   # PR_SET_DUMPABLE: libcuda writes /proc/self
        data = b""
        while not data.endswith(b"\n"):
            data += os.read(hr, 4096)
        handle_hex, nbytes = data.decode().split()
        child_open(handle_hex, int(nbytes), w)
    os.close(w)
    os.close(hr)
    import torch
    t0 = time.monotonic()
    torch.zeros(1, device="cuda")
    init_s = time.monotonic() - t0
    lib = driver()
    nbytes = 64 << 20
    p = ctypes.c_uint64()
    rc = lib.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(nbytes))
    h = Handle()
    rc2 = lib.cuIpcGetMemHandle(ctypes.byref(h), p)
    buf = torch.as_tensor(CAI(p.value, nbytes), device="cuda")
    buf.zero_()
    torch.cuda.synchronize()
    os.write(hw, f"{bytes(h).hex()} {nbytes}\n".encode())
    data = b""
    while not data.endswith(b"\n"):
        chunk = os.read(r, 4096)
        if not chunk:
            break
        data += chunk
    os.waitpid(pid, 0)
    got = json.loads(data or b"{}")
    torch.cuda.synchronize()
    val = float(buf.view(torch.float32)[:16].mean())
    emit("ipc_uid" if drop_uid else "ipc", alloc_rc=rc, handle_rc=rc2, parent_zero_copy=buf.data_ptr() == p.value,
         parent_init_s=round(init_s, 3), child=got, parent_reads=val)


def probe_context_cost():
    go_r, go_w = os.pipe()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:   # the extra context: created when the parent says so
        os.read(go_r, 1)
        t0 = time.monotonic()
        import torch as t2
        t2.zeros(1, device="cuda")
        dt = time.monotonic() - t0
        os.write(w, f"{dt}\n".encode())
        time.sleep(1.0)
        os._exit(0)
    os.close(w)
    import torch
    torch.zeros(1, device="cuda")
    free0, total = torch.cuda.mem_get_info()
    os.write(go_w, b"g")
    dt = float(os.read(r, 100).decode())
    time.sleep(0.3)
    free1, _ = torch.cuda.mem_get_info()
    os.waitpid(pid, 0)
    emit("context", child_init_s=round(dt, 3), context_mib=round((free0 - free1) / 2**20, 1),
         total_gib=round(total / 2**30, 1))


def spin_wall_ms(torch, cycles):
    t0 = time.perf_counter()
    torch.cuda._sleep(cycles)
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) * 1e3


def probe_drain():
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        import torch as t2
        t2.zeros(1, device="cuda")
        for _ in range(20):
            t2.cuda._sleep(20_000_000)   # ~10 ms each at ~2 GHz: ~200 ms queued
        os.write(w, b"q\n")
        os.kill(os.getpid(), signal.SIGSTOP)
        os._exit(0)
    os.close(w)
    import torch
    torch.zeros(1, device="cuda")
    cycles = 100_000
    os.read(r, 10)
    t_stop = time.monotonic()
    readings = []
    while time.monotonic() - t_stop < 0.6:
        ms = spin_wall_ms(torch, cycles)
        readings.append((round(time.monotonic() - t_stop, 4), round(ms, 3)))
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    idle = sorted(spin_wall_ms(torch, cycles) for _ in range(20))[10]
    first_idle = next((t for t, ms in readings if ms < 1.5 * idle), None)
    emit("drain", idle_spin_ms=round(idle, 3), first_idle_s=first_idle, n=len(readings),
         readings=readings[:12] + readings[-3:])


def at_once(n, fn):
    """Fork n children that each run fn() at once: (wall s, each child's s, sorted)."""
    r, w = os.pipe()
    t0 = time.monotonic()
    pids = []
    for _ in range(n):
        pid = os.fork()
        if pid == 0:
            t1 = time.monotonic()
            fn()
            os.write(w, f"{time.monotonic() - t1:.3f}\n".encode())
            os._exit(0)
        pids.append(pid)
    for pid in pids:
        os.waitpid(pid, 0)
    wall = time.monotonic() - t0
    os.close(w)
    each = sorted(float(x) for x in os.read(r, 1 << 16).decode().split())
    os.close(r)
    return wall, each


def torch_context():
    import torch
    torch.zeros(1, device="cuda")
    torch.cuda.synchronize()


def probe_contexts():
    """N processes create their CUDA context at once (forked from a parent that imported
    torch, as a zygote does): does creation serialise? Wall time for N = 1, 4, 16."""
    import torch  # noqa: F401 - imported before the forks, as in the zygote
    for n in (1, 4, 16):
        wall, each = at_once(n, torch_context)
        emit("contexts", n=n, wall_s=round(wall, 3), each_median_s=each[len(each) // 2], each_max_s=each[-1])


def probe_context_kinds():
    """Which part of a context's creation serialises: the driver's own (cuInit, the primary
    context, one allocation) or torch's on top; 1 and 16 at once. Run it again with
    CUDA_DEVICE_MAX_CONNECTIONS=1 (fewer hardware channels per context) to compare."""
    import ctypes
    import torch  # noqa: F401

    def raw():
        lib = ctypes.CDLL("libcuda.so.1")
        ctx, ptr = ctypes.c_void_p(), ctypes.c_uint64()
        assert lib.cuInit(0) == 0
        assert lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0) == 0
        assert lib.cuCtxSetCurrent(ctx) == 0
        assert lib.cuMemAlloc_v2(ctypes.byref(ptr), ctypes.c_size_t(1 << 20)) == 0

    for kind, fn in (("driver", raw), ("torch", torch_context)):
        for n in (1, 16):
            wall, each = at_once(n, fn)
            emit("context_kinds", kind=kind, n=n, conns=os.environ.get("CUDA_DEVICE_MAX_CONNECTIONS", ""),
                 wall_s=round(wall, 3), each_median_s=each[len(each) // 2] if each else None)


PROBES = {"contexts": probe_contexts, "context_kinds": probe_context_kinds, "ipc": probe_ipc,
          "ipc_uid": lambda: probe_ipc(drop_uid=True), "context": probe_context_cost, "drain": probe_drain}


def main(argv):
    if argv:   # one probe per process: CUDA cannot be re-initialised in a fork
        PROBES[argv[0]]()
        return 0
    import subprocess
    for name in ("contexts", "ipc", "ipc_uid", "context", "drain"):
        subprocess.run([sys.executable, __file__, name], timeout=120, check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
