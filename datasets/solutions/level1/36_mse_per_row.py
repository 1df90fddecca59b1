"""Honest solution: one program per row streams both inputs once in BLOCK-wide chunks,
accumulating (pred - target)^2 in fp32 lanes, then writes the row mean.

The row width is a constexpr, so the chunk loop has a Python-int bound (one compile per width).
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def mse_rows_kernel(p_ptr, t_ptr, out_ptr, stride_p, stride_t, n_cols: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for c0 in range(0, n_cols, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        mask = cols < n_cols
        p = tl.load(p_ptr + row * stride_p + cols, mask=mask, other=0.0).to(tl.float32)
        t = tl.load(t_ptr + row * stride_t + cols, mask=mask, other=0.0).to(tl.float32)
        d = p - t
        acc += d * d
    tl.store(out_ptr + row, tl.sum(acc, axis=0) / n_cols)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, pred, target):
        p = pred.contiguous().reshape(-1, pred.shape[-1])
        t = target.contiguous().reshape(-1, target.shape[-1])
        rows, cols = p.shape
        out = torch.empty((rows,), device=p.device, dtype=pred.dtype)
        block = min(triton.next_power_of_2(cols), 2048)
        mse_rows_kernel[(rows,)](p, t, out, p.stride(0), t.stride(0), cols, BLOCK=block,
                                 num_warps=8 if block >= 2048 else 4)
        return out.reshape(pred.shape[:-1])
