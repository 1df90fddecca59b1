"""GroupNorm (32 groups, learnable affine) over an fp32 NCHW activation."""
import torch
import torch.nn as nn

TAGS = ["norm", "reduction", "memory-bound", "fp32"]

B, C, H, W = 64, 256, 64, 64
GROUPS = 32
DTYPE = torch.float32


class Model(nn.Module):
    def __init__(self, num_groups, num_channels, eps):
        super().__init__()
        self.norm = nn.GroupNorm(num_groups, num_channels, eps=eps)
        with torch.no_grad():
            self.norm.weight.copy_(1.0 + 0.5 * torch.randn(num_channels))
            self.norm.bias.copy_(0.5 * torch.randn(num_channels))

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    # Per-(sample, channel) offsets, so groups are not already zero-mean.
    return [torch.randn(B, C, H, W, dtype=DTYPE) + torch.randn(B, C, 1, 1) * 2.0]


def get_init_inputs():
    return [GROUPS, C, 1e-5]


def get_held_out_inputs():
    return [[torch.randn(3, C, 37, 29, dtype=DTYPE) + 1.5]]
