"""fp32 cumulative product (torch.cumprod) along rows of 4096 of values near 1.

Factors are 1 + 0.01 * randn, so the running products wander over roughly e^-2..e^2
instead of underflowing or overflowing, and relative rounding error stays ~1e-6.
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
        return torch.cumprod(x, dim=-1)


def _input(rows, cols):
    return 1.0 + 0.01 * torch.randn(rows, cols, dtype=DTYPE)


def get_inputs():
    return [_input(ROWS, COLS)]


def get_init_inputs():
    return []


def get_held_out_inputs():
    return [[_input(1000, 3000)], [_input(7, 4099)]]
