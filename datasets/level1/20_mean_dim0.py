"""Mean over dim 0 of a tall fp32 matrix (column reduction across 65536 rows)."""
import torch
import torch.nn as nn

TAGS = ["reduction", "memory-bound", "fp32"]

M, N = 65536, 4096
DTYPE = torch.float32
# The output is tiny; any implementation must at least read the input once.
MIN_BYTES = M * N * 4


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.mean(x, dim=0)


def get_inputs():
    # A per-column offset: the mean of 65536 N(0, 1) entries is ~0 for every column and
    # seed, which would let a zeros kernel pass.
    return [torch.randn(M, N, dtype=DTYPE) + torch.randn(1, N) * 3.0]


def get_init_inputs():
    return []


def get_held_out_inputs():
    return [[torch.randn(5001, 999, dtype=DTYPE) + torch.randn(1, 999)]]
