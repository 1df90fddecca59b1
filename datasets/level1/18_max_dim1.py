"""Max (values only) over the middle dimension of a 3-D bf16 tensor: a strided reduction."""
import torch
import torch.nn as nn

TAGS = ["reduction", "memory-bound", "bf16"]

B, D, N = 64, 2048, 2048
DTYPE = torch.bfloat16
# The output is tiny; any implementation must at least read the input once.
MIN_BYTES = B * D * N * 2


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.amax(x, dim=self.dim)


def get_inputs():
    # A per-(sample, column) offset spreads the maxima far beyond bf16 rounding.
    return [torch.randn(B, D, N, dtype=DTYPE) + torch.randn(B, 1, N, dtype=DTYPE) * 2.0]


def get_init_inputs():
    return [1]


def get_held_out_inputs():
    return [[torch.randn(3, 999, 1001, dtype=DTYPE)]]
