"""Sum over the last dimension of a 3-D fp32 tensor (row reduction)."""
import torch
import torch.nn as nn

TAGS = ["reduction", "memory-bound", "fp32"]

B, M, N = 32, 1024, 8192
DTYPE = torch.float32
# The output is tiny; any implementation must at least read the input once.
MIN_BYTES = B * M * N * 4


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.sum(x, dim=-1)


def get_inputs():
    # Row sums of N(0, 1) entries have std ~90; a per-row offset adds a seed-dependent mean.
    return [torch.randn(B, M, N, dtype=DTYPE) + torch.randn(B, M, 1)]


def get_init_inputs():
    return []


def get_held_out_inputs():
    return [[torch.randn(3, 100, 3001, dtype=DTYPE) + 0.5]]
