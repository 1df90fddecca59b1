"""decoy: launches its correct kernel every call, but on a one-element dummy, and computes the
answer with torch, so launches are counted while the kernel does none of the work."""
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


class ModelNew(nn.Module):
    def forward(self, x, y):
        dummy = torch.zeros(1, device=x.device, dtype=x.dtype)
        add_relu_kernel[(1,)](dummy, dummy, torch.empty_like(dummy), 1, BLOCK=16)
        return torch.relu(x + y)
