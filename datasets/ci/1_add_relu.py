"""relu(x + y) on a small 2-D fp32 tensor (elementwise)."""
import torch
import torch.nn as nn

TAGS = ["elementwise", "activation", "fp32"]


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, y):
        return torch.relu(x + y)


def get_inputs():
    return [torch.randn(64, 128), torch.randn(64, 128)]


def get_init_inputs():
    return []


def get_held_out_inputs():
    return [[torch.randn(37, 101), torch.randn(37, 101)]]
