"""GELU with the tanh approximation over a large fp16 matrix."""
import torch
import torch.nn as nn
import torch.nn.functional as F

TAGS = ["activation", "elementwise", "memory-bound", "fp16"]

M, N = 16384, 16384
DTYPE = torch.float16


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.gelu(x, approximate="tanh")


def get_inputs():
    return [torch.randn(M, N, dtype=DTYPE) * 2.0]


def get_init_inputs():
    return []


def get_held_out_inputs():
    return [[torch.randn(1000, 3001, dtype=DTYPE) * 2.0]]
