"""bf16 Conv1d (kernel 5, padding 2), GELU, then the mean over the length: output (N, C_out).

The GELU keeps the mean from folding into the convolution, and per-(sample, channel)
offsets in the input make the means differ from seed to seed.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

TAGS = ["conv", "activation", "reduction", "fused", "bf16"]

N, C_IN, C_OUT, L = 64, 128, 256, 8192
DTYPE = torch.bfloat16
# The output is tiny; any implementation must at least read the input once.
MIN_BYTES = N * C_IN * L * 2


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size, padding=kernel_size // 2).to(DTYPE)

    def forward(self, x):
        return F.gelu(self.conv(x)).mean(dim=2)


def _input(n, length):
    return torch.randn(n, C_IN, length, dtype=DTYPE) + 2.0 * torch.randn(n, C_IN, 1, dtype=DTYPE)


def get_inputs():
    return [_input(N, L)]


def get_init_inputs():
    return [C_IN, C_OUT, 5]


def get_held_out_inputs():
    return [[_input(3, 1001)]]
