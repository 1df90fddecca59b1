"""fp32 3x3 Conv2d (padding 1, with bias) over NCHW activations, in IEEE fp32 on both sides (no TF32)."""
import torch
import torch.nn as nn

N, C_IN, C_OUT, H, W = 16, 32, 64, 64, 64
DTYPE = torch.float32
TAGS = ["conv", "compute-bound", "fp32"]


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(N, C_IN, H, W, dtype=DTYPE)]


def get_init_inputs():
    return [C_IN, C_OUT, 3]


def get_held_out_inputs():
    return [[torch.randn(3, C_IN, 37, 45, dtype=DTYPE)], [torch.randn(1, C_IN, 5, 7, dtype=DTYPE)]]
