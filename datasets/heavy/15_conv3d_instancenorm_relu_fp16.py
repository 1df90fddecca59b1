"""fp16 Conv3d 32 -> 64 (3x3x3), InstanceNorm3d (affine), ReLU, on 4 volumes of 64 x 128^2.

Padding 1 keeps the volume's size. 0.46 TFLOP of convolution; then every (sample,
channel) is normalised over its 2^20 voxels: 256 long reductions over a 512 MiB
activation.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

TAGS = ["conv", "norm", "reduction", "activation", "fused", "fp16", "heavy"]

B, C_IN, C_OUT, D, H, W = 4, 32, 64, 64, 128, 128
DTYPE = torch.float16


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, eps):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size, padding=kernel_size // 2).to(DTYPE)
        self.norm = nn.InstanceNorm3d(out_channels, eps=eps, affine=True)
        with torch.no_grad():
            self.norm.weight.copy_(1.0 + 0.5 * torch.randn(out_channels))
            self.norm.bias.copy_(0.5 * torch.randn(out_channels))
        self.norm.to(DTYPE)

    def forward(self, x):
        return F.relu(self.norm(self.conv(x)))


def get_inputs():
    return [torch.randn(B, C_IN, D, H, W, dtype=DTYPE)]


def get_init_inputs():
    return [C_IN, C_OUT, 3, 1e-5]


def get_held_out_inputs():
    return [[torch.randn(2, C_IN, 6, 9, 11, dtype=DTYPE)]]
