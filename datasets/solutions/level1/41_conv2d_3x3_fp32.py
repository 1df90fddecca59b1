"""Honest solution: a direct convolution in fp32 FMA (no TF32). Each program holds a tile
of output pixels by output channels of one sample and adds, for every input channel and
tap, the outer product of the shifted input row and that tap's weights; out-of-bounds
taps read zeros, as the padding does. The reference runs in IEEE fp32 too (the harness
turns cuDNN's TF32 off), so both sides are within fp32 rounding of the exact answer.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def conv3x3_kernel(x_ptr, w_ptr, b_ptr, out_ptr, H, W,
                   C_IN: tl.constexpr, C_OUT: tl.constexpr, BLOCK_P: tl.constexpr, BLOCK_CO: tl.constexpr):
    n = tl.program_id(2).to(tl.int64)
    hw = H * W
    offs_p = tl.program_id(0) * BLOCK_P + tl.arange(0, BLOCK_P)
    offs_co = tl.program_id(1) * BLOCK_CO + tl.arange(0, BLOCK_CO)
    p_ok = offs_p < hw
    co_ok = offs_co < C_OUT
    oh = offs_p // W
    ow = offs_p % W
    x_base = x_ptr + n * C_IN * hw
    acc = tl.zeros((BLOCK_P, BLOCK_CO), dtype=tl.float32)
    for ci in range(C_IN):
        for kh in tl.static_range(3):
            ih = oh + kh - 1
            row_ok = p_ok & (ih >= 0) & (ih < H)
            for kw in tl.static_range(3):
                iw = ow + kw - 1
                ok = row_ok & (iw >= 0) & (iw < W)
                xv = tl.load(x_base + ci * hw + ih * W + iw, mask=ok, other=0.0)
                wv = tl.load(w_ptr + offs_co * (C_IN * 9) + ci * 9 + kh * 3 + kw, mask=co_ok, other=0.0)
                acc += xv[:, None] * wv[None, :]
    acc += tl.load(b_ptr + offs_co, mask=co_ok, other=0.0)[None, :]
    out = out_ptr + n * C_OUT * hw + offs_co[None, :] * hw + offs_p[:, None]
    tl.store(out, acc, mask=p_ok[:, None] & co_ok[None, :])


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        assert kernel_size == 3
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)

    def forward(self, x):
        x = x.contiguous()
        n, c, h, w = x.shape
        c_out = self.conv.out_channels
        out = torch.empty((n, c_out, h, w), device=x.device, dtype=x.dtype)
        block_p, block_co = 64, 32
        grid = (triton.cdiv(h * w, block_p), triton.cdiv(c_out, block_co), n)
        conv3x3_kernel[grid](x, self.conv.weight.contiguous(), self.conv.bias, out, h, w,
                             C_IN=c, C_OUT=c_out, BLOCK_P=block_p, BLOCK_CO=block_co, num_warps=4)
        return out
