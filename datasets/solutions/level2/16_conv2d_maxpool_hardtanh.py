"""Honest (partial-coverage) solution: cuDNN convolution without its bias, then one Triton
kernel that reads each 2x2 window once, takes the max, adds the conv bias (a per-channel
constant commutes with max) and clamps, so only the pooled quarter is written.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def bias_maxpool_hardtanh_kernel(y_ptr, cb_ptr, out_ptr, C, H, W, OH, OW, limit,
                                 BLOCK: tl.constexpr):
    plane = tl.program_id(0)
    c = plane % C
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < OH * OW
    oh = offs // OW
    ow = offs % OW
    src = y_ptr + plane.to(tl.int64) * H * W + (2 * oh) * W + 2 * ow
    v = tl.load(src, mask=mask, other=0.0).to(tl.float32)
    v = tl.maximum(v, tl.load(src + 1, mask=mask, other=0.0).to(tl.float32))
    v = tl.maximum(v, tl.load(src + W, mask=mask, other=0.0).to(tl.float32))
    v = tl.maximum(v, tl.load(src + W + 1, mask=mask, other=0.0).to(tl.float32))
    v = v + tl.load(cb_ptr + c).to(tl.float32)
    v = tl.minimum(tl.maximum(v, -limit), limit)
    tl.store(out_ptr + plane.to(tl.int64) * OH * OW + offs, v.to(out_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, limit):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size,
                              padding=kernel_size // 2).to(torch.float16)
        self.limit = limit

    def forward(self, x):
        y = F.conv2d(x, self.conv.weight, None, padding=self.conv.padding).contiguous()
        N, C, H, W = y.shape
        OH, OW = H // 2, W // 2
        out = torch.empty((N, C, OH, OW), device=y.device, dtype=y.dtype)
        BLOCK = 1024
        bias_maxpool_hardtanh_kernel[(N * C, triton.cdiv(OH * OW, BLOCK))](
            y, self.conv.bias, out, C, H, W, OH, OW, float(self.limit), BLOCK=BLOCK, num_warps=4)
        return out
