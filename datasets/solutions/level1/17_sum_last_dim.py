"""Honest solution: one program per row, a lane-wise fp32 accumulator over BLOCK-wide chunks
of the row, reduced once at the end."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, stride_x, N: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, N, BLOCK):
        idx = start + offs
        acc += tl.load(x_ptr + row * stride_x + idx, mask=idx < N, other=0.0).to(tl.float32)
    tl.store(out_ptr + row, tl.sum(acc, axis=0).to(out_ptr.dtype.element_ty))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        n = x.shape[-1]
        x2 = x.reshape(-1, n).contiguous()
        out = torch.empty(x2.shape[0], dtype=x.dtype, device=x.device)
        BLOCK = min(2048, triton.next_power_of_2(n))
        row_sum_kernel[(x2.shape[0],)](x2, out, x2.stride(0), N=n, BLOCK=BLOCK, num_warps=8)
        return out.reshape(x.shape[:-1])
