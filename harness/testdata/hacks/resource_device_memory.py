"""resource: allocates 1 GiB blocks on the inputs' device until it has 200 GiB (more than an H200
has): on a GPU the per-child cap (gpu_memory_fraction) stops it with an out-of-memory error,
and the children beside it and after it on that GPU keep working."""
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


def add_relu(x, y, out=None):
    x, y = x.contiguous(), y.contiguous()
    out = torch.empty_like(x) if out is None else out
    n = x.numel()
    add_relu_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, y):
        hog = []
        for _ in range(200):
            hog.append(torch.ones(256 * 1024 * 1024, device=x.device))  # 1 GiB, touched
        return add_relu(x, y)
