"""Honest solution: one program per row, looping over the row in BLOCK-wide chunks.

n_cols is a constexpr so the loop bound is a Python int (one compile per width).
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def sum_rows_kernel(x_ptr, out_ptr, n_cols: tl.constexpr, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for c0 in range(0, n_cols, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=0.0)
    tl.store(out_ptr + row, tl.sum(acc, axis=0))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        rows, cols = x.shape
        out = torch.empty((rows,), device=x.device, dtype=x.dtype)
        sum_rows_kernel[(rows,)](x, out, cols, x.stride(0), BLOCK=256)
        return out
