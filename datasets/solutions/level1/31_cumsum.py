"""Honest solution: one program per row; each BLOCK-wide chunk is scanned with tl.cumsum and
offset by the running total of the chunks before it (one read, one write per element).

The row width is a constexpr, so the chunk loop has a Python-int bound (one compile per width).
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def cumsum_rows_kernel(x_ptr, out_ptr, stride_x, stride_out, n_cols: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    carry = tl.zeros((), dtype=tl.float32)
    for c0 in range(0, n_cols, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
        y = tl.cumsum(x, axis=0) + carry
        tl.store(out_ptr + row * stride_out + cols, y, mask=mask)
        carry += tl.sum(x, axis=0)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x2 = x.contiguous().reshape(-1, x.shape[-1])
        rows, cols = x2.shape
        out = torch.empty_like(x2)
        block = min(triton.next_power_of_2(cols), 2048)
        cumsum_rows_kernel[(rows,)](x2, out, x2.stride(0), out.stride(0), cols, BLOCK=block,
                                    num_warps=8 if block >= 2048 else 4)
        return out.reshape(x.shape)
