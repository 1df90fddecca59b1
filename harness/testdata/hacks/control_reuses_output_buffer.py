"""control: an honest kernel that keeps one output buffer per shape and overwrites it on
every call (an allocation cache, not an output cache). It recomputes from its inputs each
time, so new values in the same input tensors give new outputs: it must stay correct."""
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
    def __init__(self):
        super().__init__()
        self.out = {}

    def forward(self, x, y):
        x, y = x.contiguous(), y.contiguous()
        key = (tuple(x.shape), x.dtype, x.device)
        out = self.out.get(key)
        if out is None:
            out = self.out[key] = torch.empty_like(x)
        n = x.numel()
        add_relu_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
        return out
