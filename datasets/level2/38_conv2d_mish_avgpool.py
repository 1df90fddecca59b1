"""fp16 3x3 Conv2d (padding 1), mish, then 2x2 average pooling (stride 2)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

TAGS = ["conv", "activation", "pooling", "fused", "fp16"]

N, C_IN, C_OUT, H, W = 64, 64, 64, 128, 128
DTYPE = torch.float16


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2).to(DTYPE)

    def forward(self, x):
        return F.avg_pool2d(F.mish(self.conv(x)), kernel_size=2, stride=2)


def get_inputs():
    return [torch.randn(N, C_IN, H, W, dtype=DTYPE)]


def get_init_inputs():
    return [C_IN, C_OUT, 3]


def get_held_out_inputs():
    return [[torch.randn(3, C_IN, 37, 45, dtype=DTYPE)]]
