"""fp16 3x3 Conv2d (padding 1, same channel count), SiLU, plus the block input as a residual."""
import torch
import torch.nn as nn
import torch.nn.functional as F

TAGS = ["conv", "activation", "residual", "fused", "fp16"]

N, C, H, W = 64, 64, 128, 128
DTYPE = torch.float16


class Model(nn.Module):
    def __init__(self, channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, kernel_size, padding=kernel_size // 2).to(DTYPE)

    def forward(self, x):
        return F.silu(self.conv(x)) + x


def get_inputs():
    return [torch.randn(N, C, H, W, dtype=DTYPE)]


def get_init_inputs():
    return [C, 3]


def get_held_out_inputs():
    return [[torch.randn(3, C, 37, 45, dtype=DTYPE)]]
