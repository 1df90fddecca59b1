"""Honest solution: one program per row, a single read of the 2^21-wide row with an online
(max, sum of exp) per lane, combined across lanes at the end; no temporary of the input.
The row width is a constexpr (one compile per width; a Python-int loop bound also runs in
the CPU interpreter)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def row_logsumexp_kernel(x_ptr, out_ptr, N: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = x_ptr + row * N
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
    lse = mx + tl.log(tl.sum(s * tl.exp(m - mx), axis=0))
    tl.store(out_ptr + row, lse.to(out_ptr.dtype.element_ty))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        n = x.shape[-1]
        x2 = x.reshape(-1, n).contiguous()
        out = torch.empty(x2.shape[0], device=x.device, dtype=x.dtype)
        BLOCK = min(4096, triton.next_power_of_2(n))
        row_logsumexp_kernel[(x2.shape[0],)](x2, out, N=n, BLOCK=BLOCK, num_warps=8)
        return out.reshape(x.shape[:-1])
