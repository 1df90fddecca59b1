"""Softplus with beta=2 and threshold=10 (linear above the threshold) over a large fp32 matrix."""
import torch
import torch.nn as nn
import torch.nn.functional as F

TAGS = ["activation", "elementwise", "memory-bound", "fp32"]

M, N = 8192, 16384
DTYPE = torch.float32


class Model(nn.Module):
    def __init__(self, beta, threshold):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, x):
        return F.softplus(x, beta=self.beta, threshold=self.threshold)


def get_inputs():
    # std 3: about 5% of the entries have beta * x above the threshold.
    return [torch.randn(M, N, dtype=DTYPE) * 3.0]


def get_init_inputs():
    return [2.0, 10.0]


def get_held_out_inputs():
    return [[torch.randn(1000, 3001, dtype=DTYPE) * 3.0]]
