"""Honest (partial-coverage) solution: cuDNN does the convolution (with its bias); one
Triton pass applies HardSwish and the per-channel scale in fp32 and rounds to bf16 once,
on a 2-D grid of (sample x channel volume, block of the volume)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def hardswish_scale_kernel(y_ptr, scale_ptr, out_ptr, C, S, BLOCK: tl.constexpr):
    plane = tl.program_id(0)
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < S
    base = plane.to(tl.int64) * S
    y = tl.load(y_ptr + base + offs, mask=mask, other=0.0).to(tl.float32)
    s = tl.load(scale_ptr + plane % C).to(tl.float32)
    y = y * tl.minimum(tl.maximum(y + 3.0, 0.0), 6.0) / 6.0 * s
    tl.store(out_ptr + base + offs, y.to(out_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size,
                              padding=kernel_size // 2).to(torch.bfloat16)
        self.scale = nn.Parameter((1.0 + 0.5 * torch.randn(out_channels, 1, 1, 1)).to(torch.bfloat16))

    def forward(self, x):
        y = self.conv(x).contiguous()
        B, C = y.shape[0], y.shape[1]
        S = y[0, 0].numel()
        out = torch.empty_like(y)
        BLOCK = min(4096, triton.next_power_of_2(S))
        hardswish_scale_kernel[(B * C, triton.cdiv(S, BLOCK))](y, self.scale, out, C, S,
                                                               BLOCK=BLOCK, num_warps=8)
        return out
