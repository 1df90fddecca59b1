"""Honest (partial-coverage) solution: cuDNN convolution without its bias, then one Triton
kernel fusing the conv bias, the ReLU and the extra per-channel bias in place.

The reference runs conv (+bias), relu and add as three passes over the output; this
runs the convolution and a single elementwise pass.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def bias_relu_bias_kernel(y_ptr, conv_b_ptr, extra_b_ptr, n, C, HW, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    c = (offs // HW) % C
    y = tl.load(y_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    cb = tl.load(conv_b_ptr + c, mask=mask, other=0.0).to(tl.float32)
    eb = tl.load(extra_b_ptr + c, mask=mask, other=0.0).to(tl.float32)
    out = tl.maximum(y + cb, 0.0) + eb
    tl.store(y_ptr + offs, out.to(y_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size,
                              padding=kernel_size // 2).to(torch.float16)
        self.bias = nn.Parameter((0.1 * torch.randn(out_channels, 1, 1)).to(torch.float16))

    def forward(self, x):
        y = F.conv2d(x, self.conv.weight, None, padding=self.conv.padding).contiguous()
        n = y.numel()
        C, HW = y.shape[1], y.shape[2] * y.shape[3]
        BLOCK = 2048
        bias_relu_bias_kernel[(triton.cdiv(n, BLOCK),)](y, self.conv.bias, self.bias, n, C, HW,
                                                        BLOCK=BLOCK, num_warps=8)
        return y
