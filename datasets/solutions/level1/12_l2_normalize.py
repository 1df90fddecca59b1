"""Honest solution: one program per row, the row held in registers: sum of squares, then
x / max(||x||, eps) from the same read."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def l2norm_kernel(x_ptr, out_ptr, N, stride_x, stride_o, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    norm = tl.sqrt(tl.sum(x * x, axis=0))
    y = x / tl.maximum(norm, eps)
    tl.store(out_ptr + row * stride_o + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        n = x.shape[1]
        out = torch.empty_like(x)
        BLOCK = triton.next_power_of_2(n)
        l2norm_kernel[(x.shape[0],)](x, out, n, x.stride(0), out.stride(0), 1e-12,
                                     BLOCK=BLOCK, num_warps=min(16, max(4, BLOCK // 512)))
        return out
