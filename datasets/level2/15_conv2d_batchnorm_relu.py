"""fp16 3x3 Conv2d (padding 1), BatchNorm2d in inference mode (running stats), then ReLU.

The normalisation always uses the running statistics (F.batch_norm with training=False),
whatever mode the module is in, so the reference is a pure function of its input.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

TAGS = ["conv", "norm", "activation", "fused", "fp16"]

N, C_IN, C_OUT, H, W = 64, 64, 128, 96, 96
DTYPE = torch.float16


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)
        self.bn = nn.BatchNorm2d(out_channels, eps=1e-5)
        with torch.no_grad():
            self.bn.weight.copy_(1.0 + 0.25 * torch.randn(out_channels))
            self.bn.bias.copy_(0.25 * torch.randn(out_channels))
            self.bn.running_mean.copy_(0.2 * torch.randn(out_channels))
            self.bn.running_var.copy_(0.25 + torch.rand(out_channels))
        self.conv = self.conv.to(DTYPE)
        self.bn = self.bn.to(DTYPE)

    def forward(self, x):
        y = self.conv(x)
        y = F.batch_norm(y, self.bn.running_mean, self.bn.running_var, self.bn.weight,
                         self.bn.bias, training=False, eps=self.bn.eps)
        return torch.relu(y)


def get_inputs():
    return [torch.randn(N, C_IN, H, W, dtype=DTYPE)]


def get_init_inputs():
    return [C_IN, C_OUT, 3]


def get_held_out_inputs():
    return [[torch.randn(3, C_IN, 37, 45, dtype=DTYPE)]]
