"""ELU with alpha=1.5 over a large fp32 matrix."""
import torch
import torch.nn as nn
import torch.nn.functional as F

TAGS = ["activation", "elementwise", "memory-bound", "fp32"]

M, N = 8192, 16384
DTYPE = torch.float32


class Model(nn.Module):
    def __init__(self, alpha):
        super().__init__()
        self.alpha = alpha

    def forward(self, x):
        return F.elu(x, alpha=self.alpha)


def get_inputs():
    return [torch.randn(M, N, dtype=DTYPE) * 2.0]


def get_init_inputs():
    return [1.5]


def get_held_out_inputs():
    return [[torch.randn(1000, 3001, dtype=DTYPE) * 2.0]]
