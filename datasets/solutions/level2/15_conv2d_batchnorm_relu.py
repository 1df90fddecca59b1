"""Honest (partial-coverage) solution: cuDNN convolution without its bias, then one Triton
pass that adds the conv bias, applies the inference BatchNorm (running stats) and the ReLU.

The reference makes three passes over the conv output (bias inside cuDNN, batch_norm,
relu); this makes one. Each program handles a block of one (sample, channel) plane, so
the per-channel constants are scalars.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def bias_bn_relu_kernel(y_ptr, cb_ptr, rm_ptr, rv_ptr, g_ptr, b_ptr, C, HW, eps,
                        BLOCK: tl.constexpr):
    plane = tl.program_id(0)
    c = plane % C
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < HW
    ptrs = y_ptr + plane.to(tl.int64) * HW + offs
    scale = tl.load(g_ptr + c).to(tl.float32) / tl.sqrt(tl.load(rv_ptr + c).to(tl.float32) + eps)
    shift = tl.load(b_ptr + c).to(tl.float32) + \
        (tl.load(cb_ptr + c).to(tl.float32) - tl.load(rm_ptr + c).to(tl.float32)) * scale
    y = tl.load(ptrs, mask=mask, other=0.0).to(tl.float32)
    out = tl.maximum(y * scale + shift, 0.0)
    tl.store(ptrs, out.to(y_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        # Same parameters, created in the same order (and RNG draws) as the reference.
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)
        self.bn = nn.BatchNorm2d(out_channels, eps=1e-5)
        with torch.no_grad():
            self.bn.weight.copy_(1.0 + 0.25 * torch.randn(out_channels))
            self.bn.bias.copy_(0.25 * torch.randn(out_channels))
            self.bn.running_mean.copy_(0.2 * torch.randn(out_channels))
            self.bn.running_var.copy_(0.25 + torch.rand(out_channels))
        self.conv = self.conv.to(torch.float16)
        self.bn = self.bn.to(torch.float16)

    def forward(self, x):
        y = F.conv2d(x, self.conv.weight, None, padding=self.conv.padding).contiguous()
        N, C, H, W = y.shape
        HW = H * W
        BLOCK = 1024
        bn = self.bn
        bias_bn_relu_kernel[(N * C, triton.cdiv(HW, BLOCK))](
            y, self.conv.bias, bn.running_mean, bn.running_var, bn.weight, bn.bias,
            C, HW, bn.eps, BLOCK=BLOCK, num_warps=4)
        return y
