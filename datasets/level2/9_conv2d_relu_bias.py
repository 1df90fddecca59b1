"""fp16 3x3 Conv2d (padding 1), ReLU, then a learnable per-channel bias added."""
import torch
import torch.nn as nn

TAGS = ["conv", "activation", "elementwise", "fused", "fp16"]

N, C_IN, C_OUT, H, W = 64, 64, 64, 128, 128
DTYPE = torch.float16


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2).to(DTYPE)
        self.bias = nn.Parameter((0.1 * torch.randn(out_channels, 1, 1)).to(DTYPE))

    def forward(self, x):
        return torch.relu(self.conv(x)) + self.bias


def get_inputs():
    return [torch.randn(N, C_IN, H, W, dtype=DTYPE)]


def get_init_inputs():
    return [C_IN, C_OUT, 3]


def get_held_out_inputs():
    return [[torch.randn(3, C_IN, 37, 45, dtype=DTYPE)]]
