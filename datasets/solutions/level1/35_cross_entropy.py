"""Honest solution: one program per sample reads its logits once, keeping a per-lane online
(max, sum of exp) pair, merges the lanes into the row's log-sum-exp and subtracts the
target's logit: loss = logsumexp(row) - row[target].

The class count is a constexpr, so the chunk loop has a Python-int bound (one compile per width).
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def cross_entropy_kernel(x_ptr, tgt_ptr, out_ptr, stride_x, n_cols: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = x_ptr + row * stride_x
    # Finite start so that exp(m_old - m_new) is 0, not NaN, before a lane sees data.
    m = tl.full((BLOCK,), -1e30, dtype=tl.float32)
    s = tl.zeros((BLOCK,), dtype=tl.float32)
    for c0 in range(0, n_cols, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        x = tl.load(base + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, x)
        s = s * tl.exp(m - m_new) + tl.exp(x - m_new)
        m = m_new
    m_row = tl.max(m, axis=0)
    lse = m_row + tl.log(tl.sum(s * tl.exp(m - m_row), axis=0))
    tgt = tl.load(tgt_ptr + row)
    x_t = tl.load(base + tgt).to(tl.float32)
    tl.store(out_ptr + row, lse - x_t)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits, target):
        x = logits.contiguous()
        rows, cols = x.shape
        out = torch.empty((rows,), device=x.device, dtype=logits.dtype)
        block = min(triton.next_power_of_2(cols), 2048)
        cross_entropy_kernel[(rows,)](x, target.contiguous(), out, x.stride(0), cols, BLOCK=block,
                                      num_warps=8 if block >= 2048 else 4)
        return out
