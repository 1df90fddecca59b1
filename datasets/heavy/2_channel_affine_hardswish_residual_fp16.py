"""Per-channel affine, HardSwish and a residual add over a 1 GiB fp16 NCHW activation.

out = hardswish(x * scale[c] + shift[c]) + x. The channel parameters broadcast over the
middle dimension, so a kernel must map each element to its channel.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

TAGS = ["activation", "elementwise", "residual", "fused", "memory-bound", "fp16", "heavy"]

B, C, H, W = 128, 256, 128, 128
DTYPE = torch.float16


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.scale = nn.Parameter((1.0 + 0.5 * torch.randn(channels)).to(DTYPE))
        self.shift = nn.Parameter((0.5 * torch.randn(channels)).to(DTYPE))

    def forward(self, x):
        c = x.shape[1]
        y = x * self.scale.view(1, c, 1, 1) + self.shift.view(1, c, 1, 1)
        return F.hardswish(y) + x


def get_inputs():
    return [torch.randn(B, C, H, W, dtype=DTYPE)]


def get_init_inputs():
    return [C]


def get_held_out_inputs():
    return [[torch.randn(3, C, 17, 23, dtype=DTYPE)]]
