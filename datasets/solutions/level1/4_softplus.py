"""Honest solution: one flat pass of the overflow-free softplus max(z, 0) + log1p(exp(-|z|)), z = beta x."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softplus_kernel(x_ptr, out_ptr, n, beta, threshold, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    z = x * beta
    u = tl.exp(-tl.abs(z))
    # log1p(u): the series for tiny u, where 1 + u would round away the information.
    l1p = tl.where(u < 1e-4, u - 0.5 * u * u, tl.log(1.0 + u))
    y = (tl.maximum(z, 0.0) + l1p) / beta
    tl.store(out_ptr + offs, tl.where(z > threshold, x, y), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, beta, threshold):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        BLOCK = 4096
        softplus_kernel[(triton.cdiv(n, BLOCK),)](x, out, n, self.beta, self.threshold,
                                                  BLOCK=BLOCK, num_warps=8)
        return out
