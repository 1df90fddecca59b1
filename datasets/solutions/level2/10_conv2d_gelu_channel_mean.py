"""Honest (partial-coverage) solution: cuDNN convolution, then one Triton kernel that
applies GELU and averages each (sample, channel) plane, so the GELU output is never
written to memory. HW is a constexpr (one compile per spatial size; a Python-int loop
bound also runs in Triton's CPU interpreter).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def gelu_plane_mean_kernel(y_ptr, out_ptr, HW: tl.constexpr, BLOCK: tl.constexpr):
    plane = tl.program_id(0)
    base = y_ptr + plane.to(tl.int64) * HW
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for i0 in range(0, HW, BLOCK):
        offs = i0 + tl.arange(0, BLOCK)
        v = tl.load(base + offs, mask=offs < HW, other=0.0).to(tl.float32)
        acc += 0.5 * v * (1.0 + tl.erf(v * 0.7071067811865476))  # gelu(0) == 0 for the padding
    tl.store(out_ptr + plane, (tl.sum(acc, axis=0) / HW).to(out_ptr.dtype.element_ty))


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size,
                              padding=kernel_size // 2).to(torch.bfloat16)

    def forward(self, x):
        y = self.conv(x).contiguous()
        N, C, H, W = y.shape
        out = torch.empty((N, C), device=y.device, dtype=y.dtype)
        gelu_plane_mean_kernel[(N * C,)](y, out, H * W, BLOCK=2048, num_warps=8)
        return out
