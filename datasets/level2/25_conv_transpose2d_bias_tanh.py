"""fp16 ConvTranspose2d (4x4, stride 2, padding 1: 2x upsample), plus a per-channel bias, then tanh."""
import torch
import torch.nn as nn

TAGS = ["conv", "activation", "elementwise", "fused", "fp16"]

N, C_IN, C_OUT, H, W = 64, 128, 64, 64, 64
DTYPE = torch.float16


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding):
        super().__init__()
        self.deconv = nn.ConvTranspose2d(in_channels, out_channels, kernel_size,
                                         stride=stride, padding=padding).to(DTYPE)
        self.bias = nn.Parameter((0.5 * torch.randn(out_channels, 1, 1)).to(DTYPE))

    def forward(self, x):
        return torch.tanh(self.deconv(x) + self.bias)


def get_inputs():
    return [torch.randn(N, C_IN, H, W, dtype=DTYPE)]


def get_init_inputs():
    return [C_IN, C_OUT, 4, 2, 1]


def get_held_out_inputs():
    return [[torch.randn(3, C_IN, 19, 27, dtype=DTYPE)]]
