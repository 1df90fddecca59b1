"""bf16 3x3 Conv2d (padding 1), max over the output channels, then swish: output (N, 1, H, W).

Swish rather than a squashing sigmoid: the channel maxima cluster around one value, and
a sigmoid would flatten them until a constant came close to passing the tolerance.
"""
import torch
import torch.nn as nn

TAGS = ["conv", "reduction", "activation", "fused", "bf16"]

N, C_IN, C_OUT, H, W = 64, 32, 64, 128, 128
DTYPE = torch.bfloat16
# The reference is 0.73 of the bfloat16 default tolerance (atol 0.01, rtol 0.016)
# from a float64 run of itself, over half of it, where the check warns (2.062 against
# 2.094, seed 1; H200, 2026-12-04, `kernelgate tasks check`). Both terms scaled
# to put that at 0.4 of the tolerance, as the check advises.
ATOL = 0.019
RTOL = 0.03


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2).to(DTYPE)

    def forward(self, x):
        y = self.conv(x).amax(dim=1, keepdim=True)
        return y * torch.sigmoid(y)


def get_inputs():
    return [torch.randn(N, C_IN, H, W, dtype=DTYPE)]


def get_init_inputs():
    return [C_IN, C_OUT, 3]


def get_held_out_inputs():
    return [[torch.randn(3, C_IN, 37, 45, dtype=DTYPE)]]
