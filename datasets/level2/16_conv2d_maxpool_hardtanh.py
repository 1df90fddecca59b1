"""fp16 3x3 Conv2d (padding 1), 2x2 max-pool (stride 2), then hardtanh to [-0.5, 0.5]."""
import torch
import torch.nn as nn
import torch.nn.functional as F

TAGS = ["conv", "pooling", "activation", "fused", "fp16"]

N, C_IN, C_OUT, H, W = 64, 64, 64, 128, 128
DTYPE = torch.float16


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, limit):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2).to(DTYPE)
        self.limit = limit

    def forward(self, x):
        y = F.max_pool2d(self.conv(x), kernel_size=2, stride=2)
        return F.hardtanh(y, -self.limit, self.limit)


def get_inputs():
    return [torch.randn(N, C_IN, H, W, dtype=DTYPE)]


def get_init_inputs():
    return [C_IN, C_OUT, 3, 0.5]


def get_held_out_inputs():
    # Odd sizes: the last row and column are dropped by the pool (floor mode).
    return [[torch.randn(3, C_IN, 37, 45, dtype=DTYPE)]]
