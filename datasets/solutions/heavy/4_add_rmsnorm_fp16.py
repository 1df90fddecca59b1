"""Honest solution: one program per row reads x and r once and writes both outputs: the sum
(rounded to fp16, as the reference's x + r is) and its RMS-normalised, weighted copy.
The normalised value is rounded to fp16 before the weight, as in the reference."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def add_rmsnorm_kernel(x_ptr, r_ptr, w_ptr, out_ptr, h_ptr, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    base = row * N
    x = tl.load(x_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
    r = tl.load(r_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
    h = (x + r).to(h_ptr.dtype.element_ty)
    tl.store(h_ptr + base + cols, h, mask=mask)
    hf = h.to(tl.float32)
    rstd = 1.0 / tl.sqrt(tl.sum(hf * hf, axis=0) / N + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    y = (hf * rstd).to(out_ptr.dtype.element_ty).to(tl.float32) * w
    tl.store(out_ptr + base + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, hidden, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter((1.0 + 0.5 * torch.randn(hidden)).to(torch.float16))

    def forward(self, x, residual):
        n = x.shape[-1]
        x2 = x.reshape(-1, n).contiguous()
        r2 = residual.reshape(-1, n).contiguous()
        out, h = torch.empty_like(x2), torch.empty_like(x2)
        BLOCK = triton.next_power_of_2(n)
        add_rmsnorm_kernel[(x2.shape[0],)](x2, r2, self.weight, out, h, n, self.eps,
                                           BLOCK=BLOCK, num_warps=min(16, max(4, BLOCK // 512)))
        return out.reshape(x.shape), h.reshape(x.shape)
