"""bf16 Conv3d 64 -> 128 (3x3x3), HardSwish, channel scale, on 8 volumes of 32 x 128 x 128.

Padding 1 keeps the volume's size. 1.9 TFLOP of convolution (512 MiB in, 1 GiB out).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

TAGS = ["conv", "activation", "fused", "compute-bound", "bf16", "heavy"]

B, C_IN, C_OUT, D, H, W = 8, 64, 128, 32, 128, 128
DTYPE = torch.bfloat16
# The reference is 1.34 of the bfloat16 default tolerance (atol 0.01, rtol 0.016)
# from a float64 run of itself, past it: an exact kernel is rejected on that seed (-0.03491 against
# -0.04907, seed 1; H200, 2026-12-04, `kernelgate tasks check`). Both terms scaled
# to put that at 0.4 of the tolerance, as the check advises.
ATOL = 0.034
RTOL = 0.054


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size, padding=kernel_size // 2).to(DTYPE)
        self.scale = nn.Parameter((1.0 + 0.5 * torch.randn(out_channels, 1, 1, 1)).to(DTYPE))

    def forward(self, x):
        return F.hardswish(self.conv(x)) * self.scale


def get_inputs():
    return [torch.randn(B, C_IN, D, H, W, dtype=DTYPE)]


def get_init_inputs():
    return [C_IN, C_OUT, 3]


def get_held_out_inputs():
    return [[torch.randn(2, C_IN, 7, 9, 11, dtype=DTYPE)]]
