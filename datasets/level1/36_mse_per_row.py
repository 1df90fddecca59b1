"""fp32 mean squared error per row: mse_loss(reduction='none') averaged over the last dim, output (N,).

A single mean over all elements would be ~constant for every seed (a degenerate task);
per-row losses with a per-row target scale vary from row to row and seed to seed.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

N, D = 32768, 4096
DTYPE = torch.float32
TAGS = ["loss", "reduction", "memory-bound", "fp32"]
# One value per row; any implementation must at least read both inputs once.
MIN_BYTES = 2 * N * D * 4


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, pred, target):
        return F.mse_loss(pred, target, reduction="none").mean(dim=-1)


def _inputs(n, d):
    pred = torch.randn(n, d, dtype=DTYPE)
    target = torch.randn(n, d, dtype=DTYPE) * (2.0 * torch.rand(n, 1, dtype=DTYPE))
    return [pred, target]


def get_inputs():
    return _inputs(N, D)


def get_init_inputs():
    return []


def get_held_out_inputs():
    return [_inputs(1000, 3000), _inputs(3, 5001)]
