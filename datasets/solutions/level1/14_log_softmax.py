"""Honest solution: one program per row, statistics in fp32. Rows up to 8192 wide are done in
registers; wider rows (here 16384 fp16) take an online pass (per-lane running max and
rescaled sum of exponentials) and a second pass writing x - max - log(sum)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def log_softmax_row_kernel(x_ptr, out_ptr, stride_x, stride_o, N: tl.constexpr, BLOCK: tl.constexpr,
                           ONE_TILE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_x
    o_row = out_ptr + row * stride_o
    offs = tl.arange(0, BLOCK)
    if ONE_TILE:
        mask = offs < N
        x = tl.load(x_row + offs, mask=mask, other=-float("inf")).to(tl.float32)
        d = x - tl.max(x, axis=0)
        e = tl.where(mask, tl.exp(d), 0.0)
        y = d - tl.log(tl.sum(e, axis=0))
        tl.store(o_row + offs, y.to(out_ptr.dtype.element_ty), mask=mask)
    else:
        # Per-lane online statistics; -1e30 (not -inf) keeps exp(m_old - m_new) finite.
        m = tl.full((BLOCK,), -1e30, dtype=tl.float32)
        s = tl.zeros((BLOCK,), dtype=tl.float32)
        for start in range(0, N, BLOCK):
            idx = start + offs
            x = tl.load(x_row + idx, mask=idx < N, other=-float("inf")).to(tl.float32)
            m_new = tl.maximum(m, x)
            s = s * tl.exp(m - m_new) + tl.exp(x - m_new)
            m = m_new
        row_max = tl.max(m, axis=0)
        shift = row_max + tl.log(tl.sum(s * tl.exp(m - row_max), axis=0))
        for start in range(0, N, BLOCK):
            idx = start + offs
            mask = idx < N
            x = tl.load(x_row + idx, mask=mask, other=0.0).to(tl.float32)
            tl.store(o_row + idx, (x - shift).to(out_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        n = x.shape[-1]
        x2 = x.reshape(-1, n).contiguous()
        out = torch.empty_like(x2)
        full = triton.next_power_of_2(n)
        one_tile = full <= 8192
        BLOCK = full if one_tile else 4096
        log_softmax_row_kernel[(x2.shape[0],)](x2, out, x2.stride(0), out.stride(0), N=n, BLOCK=BLOCK,
                                               ONE_TILE=one_tile, num_warps=min(16, max(4, BLOCK // 512)))
        return out.reshape(x.shape)
