"""bf16 Conv3d 64 -> 128 (3x3x3), HardSwish, channel scale, on 8 volumes of 32 x 128 x 128.

Padding 1 keeps the volume's size. 1.9 TFLOP of convolution (512 MiB in, 1 GiB out).
16-bit on purpose: cuDNN may use TF32 for an fp32 convolution, which would put the
reference itself ~1e-3 off an exact kernel.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

TAGS = ["conv", "activation", "fused", "compute-bound", "bf16", "heavy"]

B, C_IN, C_OUT, D, H, W = 8, 64, 128, 32, 128, 128
DTYPE = torch.bfloat16


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
