"""Honest control: runs the kernel on a side stream and joins it before returning.

The current stream waits for the side stream and the output is marked as used by the
current stream, so nothing is left running when forward returns. On the CPU (no CUDA
stream exists) it runs inline. Must be correct in both modes."""
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
        if torch.cuda.is_available() and x.is_cuda:
            side = torch.cuda.Stream(device=x.device)
            side.wait_stream(torch.cuda.current_stream(x.device))
            with torch.cuda.stream(side):
                out = add_relu(x, y)
            torch.cuda.current_stream(x.device).wait_stream(side)
            out.record_stream(torch.cuda.current_stream(x.device))
            return out
        return add_relu(x, y)
