"""fp16 ConvTranspose3d 128 -> 64 (2x upsampling), LeakyReLU, per-channel scale.

Kernel 4, stride 2, padding 1: 16 volumes of 16 x 64 x 64 become 32 x 128 x 128. 1.1 TFLOP
(256 MiB in, 1 GiB out). The input is scaled by 2 so the outputs sit well above the fp16
tolerance.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

TAGS = ["conv", "activation", "fused", "compute-bound", "fp16", "heavy"]

B, C_IN, C_OUT, D, H, W = 16, 128, 64, 16, 64, 64
DTYPE = torch.float16


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding):
        super().__init__()
        self.conv_t = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride=stride,
                                         padding=padding).to(DTYPE)
        self.gamma = nn.Parameter((1.0 + 0.5 * torch.randn(out_channels, 1, 1, 1)).to(DTYPE))

    def forward(self, x):
        return F.leaky_relu(self.conv_t(x), 0.2) * self.gamma


def _input(b, d, h, w):
    x = torch.randn(b, C_IN, d, h, w, dtype=DTYPE)
    x.mul_(2.0)
    return x


def get_inputs():
    return [_input(B, D, H, W)]


def get_init_inputs():
    return [C_IN, C_OUT, 4, 2, 1]


def get_held_out_inputs():
    return [[_input(2, 5, 7, 9)]]
