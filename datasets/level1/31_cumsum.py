"""fp32 inclusive prefix sum (torch.cumsum) along rows of 4096.

Inputs are uniform in [0, 1): every prefix is positive and grows steadily, so fp32
rounding differences between a sequential and a tree-shaped scan stay far below the
1e-4 relative tolerance (no prefix lands near zero, where only atol would apply).
"""
import torch
import torch.nn as nn

ROWS, COLS = 32768, 4096
DTYPE = torch.float32
TAGS = ["scan", "memory-bound", "fp32"]


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.cumsum(x, dim=-1)


def get_inputs():
    return [torch.rand(ROWS, COLS, dtype=DTYPE)]


def get_init_inputs():
    return []


def get_held_out_inputs():
    return [[torch.rand(1000, 3000, dtype=DTYPE)], [torch.rand(7, 4099, dtype=DTYPE)]]
