"""bf16 3x3 Conv2d (padding 1), InstanceNorm2d (no affine), then a learnable per-channel scale."""
import torch
import torch.nn as nn

TAGS = ["conv", "norm", "reduction", "elementwise", "fused", "bf16"]

N, C_IN, C_OUT, H, W = 64, 32, 64, 128, 128
DTYPE = torch.bfloat16
# The reference is 0.84 of the bfloat16 default tolerance (atol 0.01, rtol 0.016)
# from a float64 run of itself, over half of it, where the check warns (4 against
# 4.062, seed 0; H200, 2026-12-04, `kernelgate tasks check`). Both terms scaled
# to put that at 0.4 of the tolerance, as the check advises.
ATOL = 0.022
RTOL = 0.034


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2).to(DTYPE)
        self.norm = nn.InstanceNorm2d(out_channels, eps=1e-5, affine=False)
        self.scale = nn.Parameter((1.0 + 0.5 * torch.randn(out_channels, 1, 1)).to(DTYPE))

    def forward(self, x):
        return self.norm(self.conv(x)) * self.scale


def get_inputs():
    return [torch.randn(N, C_IN, H, W, dtype=DTYPE)]


def get_init_inputs():
    return [C_IN, C_OUT, 3]


def get_held_out_inputs():
    return [[torch.randn(3, C_IN, 37, 45, dtype=DTYPE)]]
