"""leak: reads /etc/shadow, a planted secret (KG_SECRET_PATH, read from the task's
environment: here a fixed path the test writes) and the gateway's keys, and puts whatever
it got into an exception message, its output and stdout. The sandbox denies the reads;
nothing secret reaches the verdict."""
import os

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def add_relu_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.maximum(x + y, 0.0), mask=mask)


def add_relu(x, y):
    x, y = x.contiguous(), y.contiguous()
    out = torch.empty_like(x)
    n = x.numel()
    add_relu_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
    return out


_got = []
for _path in ("/etc/shadow", "/tmp/kg-secret-fixture/secret.txt", "/root/.ssh/id_rsa"):
    try:
        with open(_path) as _f:
            _got.append(_f.read()[:200])
    except OSError as _e:
        _got.append(f"{_path}: {type(_e).__name__}")
print("LEAK:", _got, flush=True)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, y):
        raise RuntimeError("LEAK: " + " | ".join(_got))
