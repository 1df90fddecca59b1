"""fp32 matmul whose K (3000) is not a multiple of 64: (2048 x 3000) @ (3000 x 2048), IEEE fp32 (no TF32).

The right operand is scaled by 1/sqrt(K), like a Linear layer's weights, so outputs are
O(1) and fp32 accumulation-order differences stay well inside the 1e-4 tolerance.
"""
import math

import torch
import torch.nn as nn

M, K, N = 2048, 3000, 2048
DTYPE = torch.float32
TAGS = ["matmul", "gemm", "compute-bound", "fp32"]


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.matmul(a, b)


def _inputs(m, k, n):
    return [torch.randn(m, k, dtype=DTYPE), torch.randn(k, n, dtype=DTYPE) / math.sqrt(k)]


def get_inputs():
    return _inputs(M, K, N)


def get_init_inputs():
    return []


def get_held_out_inputs():
    return [_inputs(1000, 1001, 700)]
