"""fp32 matrix-vector product: (16384 x 16384) @ (16384,), bound by reading the 1 GB matrix.

The vector is scaled by 1/sqrt(K), like a Linear layer's weights, so outputs are O(1):
with unscaled randn the outputs reach ~100 and the rounding of a 16384-term fp32 sum
alone comes close to the 1e-4 absolute tolerance for outputs near zero.
"""
import math

import torch
import torch.nn as nn

M, K = 16384, 16384
DTYPE = torch.float32
TAGS = ["matmul", "memory-bound", "fp32"]
# The output is one vector; any implementation must at least read the matrix and the vector.
MIN_BYTES = (M * K + K) * 4


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, x):
        return torch.matmul(a, x)


def _inputs(m, k):
    return [torch.randn(m, k, dtype=DTYPE), torch.randn(k, dtype=DTYPE) / math.sqrt(k)]


def get_inputs():
    return _inputs(M, K)


def get_init_inputs():
    return []


def get_held_out_inputs():
    return [_inputs(1000, 3000), _inputs(4097, 517)]
