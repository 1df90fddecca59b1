"""bf16 3x3 Conv2d (padding 1), GELU, then the mean over H and W: output (N, C_out).

The GELU keeps the reduction from collapsing into a cheap linear shortcut, and the
per-(sample, channel) offsets in the input make the means differ from seed to seed.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

TAGS = ["conv", "activation", "reduction", "fused", "bf16"]

N, C_IN, C_OUT, H, W = 128, 32, 64, 128, 128
DTYPE = torch.bfloat16
# The output is tiny; any implementation must at least read the input once.
MIN_BYTES = N * C_IN * H * W * 2


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2).to(DTYPE)

    def forward(self, x):
        return F.gelu(self.conv(x)).mean(dim=(2, 3))


def _input(n, h, w):
    return torch.randn(n, C_IN, h, w, dtype=DTYPE) + 2.0 * torch.randn(n, C_IN, 1, 1, dtype=DTYPE)


def get_inputs():
    return [_input(N, H, W)]


def get_init_inputs():
    return [C_IN, C_OUT, 3]


def get_held_out_inputs():
    return [[_input(3, 37, 45)]]
