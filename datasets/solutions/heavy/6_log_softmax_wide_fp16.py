"""Honest solution: one program per row. Pass 1 keeps an online (max, sum of exp) per lane
over the 2^20-wide row and combines the lanes at the end; pass 2 writes x - logsumexp.
Two reads and one write of the row, statistics in fp32. The row width is a constexpr
(one compile per width; a Python-int loop bound also runs in the CPU interpreter)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def row_logsumexp(base, N: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    # A finite floor, not -inf: exp(m - m_new) stays defined before a lane sees a value.
    m = tl.full((BLOCK,), -1e30, tl.float32)
    s = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, N, BLOCK):
        idx = start + offs
        x = tl.load(base + idx, mask=idx < N, other=-float("inf")).to(tl.float32)
        m_new = tl.maximum(m, x)
        s = s * tl.exp(m - m_new) + tl.exp(x - m_new)
        m = m_new
    mx = tl.max(m, axis=0)
    return mx + tl.log(tl.sum(s * tl.exp(m - mx), axis=0))


@triton.jit
def log_softmax_kernel(x_ptr, out_ptr, N: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = x_ptr + row * N
    lse = row_logsumexp(base, N, BLOCK)
    offs = tl.arange(0, BLOCK)
    for start in range(0, N, BLOCK):
        idx = start + offs
        mask = idx < N
        x = tl.load(base + idx, mask=mask, other=0.0).to(tl.float32)
        tl.store(out_ptr + row * N + idx, (x - lse).to(out_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        n = x.shape[-1]
        x2 = x.reshape(-1, n).contiguous()
        out = torch.empty_like(x2)
        BLOCK = min(4096, triton.next_power_of_2(n))
        log_softmax_kernel[(x2.shape[0],)](x2, out, N=n, BLOCK=BLOCK, num_warps=8)
        return out.reshape(x.shape)
