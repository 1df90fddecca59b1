"""Honest solution: a 2-D grid over (sample x channel plane, block of the plane), so each
program loads its channel's scale and shift once; affine, HardSwish and the residual add in
fp32, one read and one write of the activation."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def affine_hardswish_residual_kernel(x_ptr, scale_ptr, shift_ptr, out_ptr, C, HW,
                                     BLOCK: tl.constexpr):
    plane = tl.program_id(0)
    c = plane % C
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < HW
    base = plane.to(tl.int64) * HW
    x = tl.load(x_ptr + base + offs, mask=mask, other=0.0).to(tl.float32)
    s = tl.load(scale_ptr + c).to(tl.float32)
    b = tl.load(shift_ptr + c).to(tl.float32)
    y = x * s + b
    y = y * tl.minimum(tl.maximum(y + 3.0, 0.0), 6.0) / 6.0 + x
    tl.store(out_ptr + base + offs, y.to(out_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.scale = nn.Parameter((1.0 + 0.5 * torch.randn(channels)).to(torch.float16))
        self.shift = nn.Parameter((0.5 * torch.randn(channels)).to(torch.float16))

    def forward(self, x):
        x = x.contiguous()
        B, C = x.shape[0], x.shape[1]
        HW = x[0, 0].numel()
        out = torch.empty_like(x)
        BLOCK = min(4096, triton.next_power_of_2(HW))
        grid = (B * C, triton.cdiv(HW, BLOCK))
        affine_hardswish_residual_kernel[grid](x, self.scale, self.shift, out, C, HW,
                                               BLOCK=BLOCK, num_warps=8)
        return out
