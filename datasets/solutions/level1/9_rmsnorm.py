"""Honest solution: one program per row; fp32 mean of squares, normalise and weight in fp32,
one rounding to bf16 at the store."""
import torch
import torch.nn as nn
import triton
import triton.language as tl

DTYPE = torch.bfloat16


@triton.jit
def rmsnorm_kernel(x_ptr, w_ptr, out_ptr, N, stride_x, stride_o, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    r = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / N + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(out_ptr + row * stride_o + cols, (x * r * w).to(out_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, hidden, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter((1.0 + 0.5 * torch.randn(hidden)).to(DTYPE))

    def forward(self, x):
        n = x.shape[-1]
        x2 = x.reshape(-1, n).contiguous()
        out = torch.empty_like(x2)
        BLOCK = triton.next_power_of_2(n)
        rmsnorm_kernel[(x2.shape[0],)](x2, self.weight, out, n, x2.stride(0), out.stride(0), self.eps,
                                       BLOCK=BLOCK, num_warps=min(16, max(4, BLOCK // 1024)))
        return out.reshape(x.shape)
