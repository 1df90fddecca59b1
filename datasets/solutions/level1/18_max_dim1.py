"""Honest solution: max over dim 1 of (B, D, N) without a transpose. Each program owns BN
contiguous columns of one sample and walks D in (BD, BN) tiles (coalesced along N), keeping
a lane-wise running max; the max is exact, so the bf16 output matches bit for bit."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def max_dim1_kernel(x_ptr, out_ptr, N, D: tl.constexpr, BD: tl.constexpr, BN: tl.constexpr):
    b = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    rows = tl.arange(0, BD)
    col_ok = cols < N
    base = b * D * N
    acc = tl.full((BD, BN), -float("inf"), dtype=tl.float32)
    for d0 in range(0, D, BD):
        r = d0 + rows
        mask = (r[:, None] < D) & col_ok[None, :]
        x = tl.load(x_ptr + base + r[:, None] * N + cols[None, :], mask=mask, other=-float("inf"))
        acc = tl.maximum(acc, x.to(tl.float32))
    tl.store(out_ptr + b * N + cols, tl.max(acc, axis=0).to(out_ptr.dtype.element_ty), mask=col_ok)


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        assert self.dim == 1 and x.dim() == 3, "this kernel reduces dim 1 of a 3-D tensor"
        x = x.contiguous()
        B, D, N = x.shape
        out = torch.empty(B, N, dtype=x.dtype, device=x.device)
        BN = 128
        BD = min(64, triton.next_power_of_2(D))
        max_dim1_kernel[(B, triton.cdiv(N, BN))](x, out, N, D=D, BD=BD, BN=BN, num_warps=8)
        return out
