"""Honest solution: x * scale + y in one masked elementwise kernel."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def scale_residual_kernel(x_ptr, y_ptr, out_ptr, n, scale, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x * scale + y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x, y):
        x = x.contiguous()
        y = y.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        scale_residual_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, self.scale, BLOCK=1024)
        return out
