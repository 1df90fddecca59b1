"""Honest solution: one program per row streams it once, accumulating |x|^3 in fp32 per
lane; the cube root is exp(log(s) / 3). The row width is a constexpr (one compile per
width; a Python-int loop bound also runs in the CPU interpreter)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def row_l3_norm_kernel(x_ptr, out_ptr, N: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = x_ptr + row * N
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, N, BLOCK):
        idx = start + offs
        a = tl.abs(tl.load(base + idx, mask=idx < N, other=0.0).to(tl.float32))
        acc += a * a * a
    s = tl.sum(acc, axis=0)
    norm = tl.where(s > 0.0, tl.exp(tl.log(s) / 3.0), 0.0)
    tl.store(out_ptr + row, norm.to(out_ptr.dtype.element_ty))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        n = x.shape[-1]
        x2 = x.reshape(-1, n).contiguous()
        out = torch.empty(x2.shape[0], device=x.device, dtype=x.dtype)
        BLOCK = min(8192, triton.next_power_of_2(n))
        row_l3_norm_kernel[(x2.shape[0],)](x2, out, N=n, BLOCK=BLOCK, num_warps=8)
        return out.reshape(x.shape[:-1])
