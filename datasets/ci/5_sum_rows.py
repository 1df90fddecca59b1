"""Sum over the last dimension of a 2-D fp32 tensor (row reduction)."""
import torch
import torch.nn as nn

TAGS = ["reduction", "fp32"]


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.sum(x, dim=1)


def get_inputs():
    return [torch.randn(64, 256)]


def get_init_inputs():
    return []


def get_held_out_inputs():
    return [[torch.randn(45, 199)]]
