"""Softmax over the last dimension of a 2-D fp32 tensor."""
import torch
import torch.nn as nn

TAGS = ["softmax", "reduction", "fp32"]


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(32, 96) * 3.0]


def get_init_inputs():
    return []


def get_held_out_inputs():
    return [[torch.randn(19, 71) * 3.0]]
