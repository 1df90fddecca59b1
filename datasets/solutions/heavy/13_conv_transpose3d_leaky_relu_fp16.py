"""Honest (partial-coverage) solution: cuDNN does the transposed convolution without its
bias; one Triton pass adds the bias, applies LeakyReLU(0.2) and the per-channel scale in
fp32, and rounds to fp16 once, on a 2-D grid of (sample x channel volume, block)."""
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def bias_leaky_scale_kernel(y_ptr, bias_ptr, gamma_ptr, out_ptr, C, S, BLOCK: tl.constexpr):
    plane = tl.program_id(0)
    c = plane % C
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < S
    base = plane.to(tl.int64) * S
    y = tl.load(y_ptr + base + offs, mask=mask, other=0.0).to(tl.float32)
    y += tl.load(bias_ptr + c).to(tl.float32)
    y = tl.where(y >= 0.0, y, 0.2 * y) * tl.load(gamma_ptr + c).to(tl.float32)
    tl.store(out_ptr + base + offs, y.to(out_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding):
        super().__init__()
        self.conv_t = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride=stride,
                                         padding=padding).to(torch.float16)
        self.gamma = nn.Parameter((1.0 + 0.5 * torch.randn(out_channels, 1, 1, 1)).to(torch.float16))

    def forward(self, x):
        ct = self.conv_t
        y = F.conv_transpose3d(x, ct.weight, None, stride=ct.stride, padding=ct.padding,
                               output_padding=ct.output_padding, groups=ct.groups,
                               dilation=ct.dilation).contiguous()
        B, C = y.shape[0], y.shape[1]
        S = y[0, 0].numel()
        out = torch.empty_like(y)
        BLOCK = min(4096, triton.next_power_of_2(S))
        bias_leaky_scale_kernel[(B * C, triton.cdiv(S, BLOCK))](y, ct.bias, self.gamma, out, C, S,
                                                                BLOCK=BLOCK, num_warps=8)
        return out
