"""bf16 3x3 Conv2d (padding 1), GroupNorm (8 groups, affine), then LeakyReLU (slope 0.1)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

TAGS = ["conv", "norm", "reduction", "activation", "fused", "bf16"]

N, C_IN, C_OUT, H, W = 64, 32, 64, 128, 128
GROUPS = 8
DTYPE = torch.bfloat16
# The reference is 1.34 of the bfloat16 default tolerance (atol 0.01, rtol 0.016)
# from a float64 run of itself, past it: an exact kernel is rejected on that seed (-3.546e-06 against
# 0.01343, seed 1; H200, 2026-12-04, `kernelgate tasks check`). Both terms scaled
# to put that at 0.4 of the tolerance, as the check advises.
ATOL = 0.034
RTOL = 0.054


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, num_groups, slope):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)
        self.norm = nn.GroupNorm(num_groups, out_channels, eps=1e-5)
        with torch.no_grad():
            self.norm.weight.copy_(1.0 + 0.5 * torch.randn(out_channels))
            self.norm.bias.copy_(0.5 * torch.randn(out_channels))
        self.conv = self.conv.to(DTYPE)
        self.norm = self.norm.to(DTYPE)
        self.slope = slope

    def forward(self, x):
        return F.leaky_relu(self.norm(self.conv(x)), self.slope)


def get_inputs():
    return [torch.randn(N, C_IN, H, W, dtype=DTYPE)]


def get_init_inputs():
    return [C_IN, C_OUT, 3, GROUPS, 0.1]


def get_held_out_inputs():
    return [[torch.randn(3, C_IN, 37, 45, dtype=DTYPE)]]
