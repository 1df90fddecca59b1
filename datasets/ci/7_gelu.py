"""GELU with the tanh approximation on a 2-D fp32 tensor."""
import torch
import torch.nn as nn

TAGS = ["activation", "elementwise", "fp32"]
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.gelu(x, approximate="tanh")


def get_inputs():
    return [torch.randn(64, 128) * 2.0]


def get_init_inputs():
    return []


def get_held_out_inputs():
    return [[torch.randn(19, 71) * 2.0]]
