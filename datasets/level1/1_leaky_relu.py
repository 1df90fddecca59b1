"""Leaky ReLU (negative slope 0.01) over a large fp32 matrix."""
import torch
import torch.nn as nn
import torch.nn.functional as F

TAGS = ["activation", "elementwise", "memory-bound", "fp32"]

M, N = 8192, 16384
DTYPE = torch.float32


class Model(nn.Module):
    def __init__(self, negative_slope):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x):
        return F.leaky_relu(x, self.negative_slope)


def get_inputs():
    return [torch.randn(M, N, dtype=DTYPE)]


def get_init_inputs():
    return [0.01]


def get_held_out_inputs():
    return [[torch.randn(1000, 3001, dtype=DTYPE)], [torch.randn(7, 5, 33, dtype=DTYPE)]]
