"""fp32 running maximum (torch.cummax values) along rows of 2048."""
import torch
import torch.nn as nn

ROWS, COLS = 65536, 2048
DTYPE = torch.float32
TAGS = ["scan", "memory-bound", "fp32"]


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.cummax(x, dim=-1).values


def get_inputs():
    return [torch.randn(ROWS, COLS, dtype=DTYPE)]


def get_init_inputs():
    return []


def get_held_out_inputs():
    return [[torch.randn(1000, 3000, dtype=DTYPE)], [torch.randn(7, 2049, dtype=DTYPE)]]
