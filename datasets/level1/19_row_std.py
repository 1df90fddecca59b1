"""Unbiased standard deviation of each row of an fp32 matrix with per-row offset and scale."""
import torch
import torch.nn as nn

TAGS = ["reduction", "norm", "memory-bound", "fp32"]

M, N = 16384, 8192
DTYPE = torch.float32
# The output is tiny; any implementation must at least read the input once.
MIN_BYTES = M * N * 4


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.std(x, dim=1)


def get_inputs():
    # Row scales in [0.5, 2.5) make the result vary; row offsets (std 3) punish the
    # cancellation-prone E[x^2] - E[x]^2 formula.
    return [torch.randn(M, N, dtype=DTYPE) * (0.5 + 2.0 * torch.rand(M, 1)) + torch.randn(M, 1) * 3.0]


def get_init_inputs():
    return []


def get_held_out_inputs():
    return [[torch.randn(1000, 3001, dtype=DTYPE) * 1.5 + 2.0]]
