"""Honest (partial-coverage) solution: cuDNN Conv1d without its bias, then one Triton kernel
per (sample, channel) row that adds the bias, applies GELU and averages over the length, so
the GELU output is never written to memory. L is a constexpr (one compile per length; a
Python-int loop bound also runs in Triton's CPU interpreter).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def bias_gelu_row_mean_kernel(y_ptr, cb_ptr, out_ptr, C, L: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    bias = tl.load(cb_ptr + row % C).to(tl.float32)
    base = y_ptr + row.to(tl.int64) * L
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for i0 in range(0, L, BLOCK):
        offs = i0 + tl.arange(0, BLOCK)
        m = offs < L
        v = tl.load(base + offs, mask=m, other=0.0).to(tl.float32) + bias
        g = 0.5 * v * (1.0 + tl.erf(v * 0.7071067811865476))
        acc += tl.where(m, g, 0.0)  # gelu(bias) != 0, so the padding must be masked out
    tl.store(out_ptr + row, (tl.sum(acc, axis=0) / L).to(out_ptr.dtype.element_ty))


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size,
                              padding=kernel_size // 2).to(torch.bfloat16)

    def forward(self, x):
        y = F.conv1d(x, self.conv.weight, None, padding=self.conv.padding).contiguous()
        N, C, L = y.shape
        out = torch.empty((N, C), device=y.device, dtype=y.dtype)
        bias_gelu_row_mean_kernel[(N * C,)](y, self.conv.bias, out, C, L, BLOCK=2048, num_warps=8)
        return out
