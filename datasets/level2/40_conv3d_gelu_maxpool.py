"""bf16 3x3x3 Conv3d (padding 1), GELU, then 2x2x2 max-pooling (stride 2)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

TAGS = ["conv", "activation", "pooling", "fused", "bf16"]

N, C_IN, C_OUT, D, H, W = 8, 16, 32, 32, 64, 64
DTYPE = torch.bfloat16
# The reference is 0.74 of the bfloat16 default tolerance (atol 0.01, rtol 0.016)
# from a float64 run of itself, over half of it, where the check warns (2.031 against
# 2.062, seed 0; H200, 2026-12-04, `kernelgate tasks check`). Both terms scaled
# to put that at 0.4 of the tolerance, as the check advises.
ATOL = 0.019
RTOL = 0.03


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size, padding=kernel_size // 2).to(DTYPE)

    def forward(self, x):
        return F.max_pool3d(F.gelu(self.conv(x)), kernel_size=2, stride=2)


def get_inputs():
    return [torch.randn(N, C_IN, D, H, W, dtype=DTYPE)]


def get_init_inputs():
    return [C_IN, C_OUT, 3]


def get_held_out_inputs():
    return [[torch.randn(2, C_IN, 9, 21, 19, dtype=DTYPE)]]
