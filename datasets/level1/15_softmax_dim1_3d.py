"""Softmax over the middle dimension (dim=1) of a 3-D fp32 tensor: a strided, non-last-dim softmax."""
import torch
import torch.nn as nn

TAGS = ["softmax", "reduction", "memory-bound", "fp32"]

B, C, L = 64, 512, 4096
DTYPE = torch.float32


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=1)


def get_inputs():
    # Probabilities average 1/512 ~ 2e-3, well above the fp32 tolerance.
    return [torch.randn(B, C, L, dtype=DTYPE) * 2.0]


def get_init_inputs():
    return []


def get_held_out_inputs():
    return [[torch.randn(3, 300, 1001, dtype=DTYPE) * 2.0]]
