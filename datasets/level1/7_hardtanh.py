"""Hardtanh (clamp to [-2, 2]) over a large bf16 matrix."""
import torch
import torch.nn as nn
import torch.nn.functional as F

TAGS = ["activation", "elementwise", "memory-bound", "bf16"]

M, N = 16384, 16384
DTYPE = torch.bfloat16


class Model(nn.Module):
    def __init__(self, min_val, max_val):
        super().__init__()
        self.min_val = min_val
        self.max_val = max_val

    def forward(self, x):
        return F.hardtanh(x, self.min_val, self.max_val)


def get_inputs():
    return [torch.randn(M, N, dtype=DTYPE) * 2.0]


def get_init_inputs():
    return [-2.0, 2.0]


def get_held_out_inputs():
    return [[torch.randn(1000, 3001, dtype=DTYPE) * 2.0]]
