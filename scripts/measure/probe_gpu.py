"""One-off probe of the GPU machine: fork-after-import, CUDA init cost, Triton compile
cost with a private cache, sandbox syscalls. Prints a few lines; informs the harness design."""
import ctypes, os, sys, time, json, tempfile
t0 = time.time()
import torch, triton, triton.language as tl
t_import = time.time() - t0
libc = ctypes.CDLL(None, use_errno=True)
print("python", sys.version.split()[0], "torch", torch.__version__, "triton", triton.__version__, "import_s", round(t_import, 2))
print("landlock_abi", libc.syscall(444, None, 0, 1))

SRC = '''
import triton, triton.language as tl
@triton.jit
def add(x, y, o, n, B: tl.constexpr):
    i = tl.program_id(0) * B + tl.arange(0, B)
    m = i < n
    tl.store(o + i, tl.load(x + i, mask=m) + tl.load(y + i, mask=m), mask=m)
'''

def child(cache):
    r = {}
    t = time.time()
    r["unshare"] = libc.unshare(0x40000000)
    os.environ["TRITON_CACHE_DIR"] = cache
    d = tempfile.mkdtemp()
    open(d + "/k.py", "w").write(SRC)
    sys.path.insert(0, d)
    t1 = time.time(); torch.cuda.init(); x = torch.rand(1 << 20, device="cuda"); torch.cuda.synchronize(); r["cuda_init_s"] = time.time() - t1
    import k
    y = torch.rand_like(x); o = torch.empty_like(x)
    t1 = time.time(); k.add[(1 << 20) // 1024,](x, y, o, x.numel(), B=1024); torch.cuda.synchronize(); r["first_launch_s"] = time.time() - t1
    t1 = time.time(); k.add[(1 << 20) // 1024,](x, y, o, x.numel(), B=1024); torch.cuda.synchronize(); r["second_launch_s"] = time.time() - t1
    r["ok"] = bool(torch.equal(o, x + y))
    r["cache_files"] = sum(len(f) for _, _, f in os.walk(cache))
    r["threads"] = len(os.listdir("/proc/self/task"))
    r["total_s"] = time.time() - t
    return r

for name, cache in (("cold-private", tempfile.mkdtemp()), ("cold-private-2", tempfile.mkdtemp())):
    rd, wr = os.pipe()
    t = time.time()
    pid = os.fork()
    if pid == 0:
        os.close(rd)
        try:
            res = child(cache)
        except Exception as e:
            res = {"error": repr(e)}
        os.write(wr, json.dumps(res).encode()); os._exit(0)
    os.close(wr)
    data = b""
    while True:
        c = os.read(rd, 65536)
        if not c: break
        data += c
    os.waitpid(pid, 0)
    print(name, "wall_s", round(time.time() - t, 3), data.decode())
print("zygote threads", len(os.listdir("/proc/self/task")))
props = torch.cuda.get_device_properties(0) if False else None
