"""fp32 reverse (suffix) cumulative sum along rows of 8192: flip, cumsum, flip.

Inputs are uniform in [0, 1) so every suffix sum is positive and fp32 rounding stays
well inside the 1e-4 relative tolerance.
"""
import torch
import torch.nn as nn

ROWS, COLS = 16384, 8192
DTYPE = torch.float32
TAGS = ["scan", "memory-bound", "fp32"]


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.flip(torch.cumsum(torch.flip(x, dims=[-1]), dim=-1), dims=[-1])


def get_inputs():
    return [torch.rand(ROWS, COLS, dtype=DTYPE)]


def get_init_inputs():
    return []


def get_held_out_inputs():
    return [[torch.rand(1000, 3000, dtype=DTYPE)], [torch.rand(5, 8200, dtype=DTYPE)]]
