"""Fills a Triton cache with what every GPU child needs, from trusted code only.

A private cache per evaluation is the cache_poison defence, but an empty one makes
every child rebuild Triton's CUDA driver stubs with the C compiler before its first
launch. The zygote runs this once in a forked child (CUDA must stay uninitialised in
the zygote itself) and each child starts from a copy of the result.
"""

import os
import shutil

import triton
import triton.language as tl

ENV = "KERNELGATE_TRUSTED_TRITON_CACHE"


@triton.jit
def _fill(x_ptr, n, value, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, value, mask=offs < n)


def _compile_in(cache_dir):
    import torch
    from triton import knobs
    os.environ["TRITON_CACHE_DIR"] = cache_dir
    knobs.cache.dir = cache_dir
    x = torch.empty(1000, device="cuda")
    _fill[(4,)](x, 1000, 1.5, BLOCK=256)
    torch.cuda.synchronize()
    if float(x.sum()) != 1500.0:
        raise RuntimeError("warm-up kernel computed a wrong result")


def fill(cache_dir, timeout_s=120.0):
    """Fork, compile one kernel into cache_dir, wait. Returns None or the reason it failed."""
    import time
    os.makedirs(cache_dir, mode=0o700, exist_ok=True)
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            _compile_in(cache_dir)
            code = 0
        finally:
            os._exit(code)
    deadline = time.monotonic() + timeout_s
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return None if os.waitstatus_to_exitcode(status) == 0 else f"warm-up child failed ({status})"
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            return "warm-up child timed out"
        time.sleep(0.05)


def seed_private(cache_dir):
    """In a child, before the sandbox: start its private cache as a copy of the trusted one."""
    src = os.environ.pop(ENV, None)
    if src and os.path.isdir(src):
        shutil.copytree(src, cache_dir, dirs_exist_ok=True)
