"""fp32 matmul with a weight, divided by a constant, softplus, summed over the features, scaled: output (M, 1).

The softplus sits before the sum on purpose: without it the sum folds into a GEMV.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

TAGS = ["gemm", "matmul", "activation", "reduction", "fused", "compute-bound", "fp32"]

M, K, N = 2048, 2048, 2048
DTYPE = torch.float32
# The output is tiny; any implementation must at least read x and the weight once.
MIN_BYTES = (M * K + N * K) * 4


class Model(nn.Module):
    def __init__(self, in_features, out_features, divisor, scale):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(in_features, out_features) / in_features ** 0.5)
        self.divisor = divisor
        self.scale = scale

    def forward(self, x):
        y = F.softplus(torch.matmul(x, self.weight) / self.divisor)
        return y.sum(dim=1, keepdim=True) * self.scale


def get_inputs():
    return [torch.randn(M, K, dtype=DTYPE)]


def get_init_inputs():
    return [K, N, 0.5, 0.01]


def get_held_out_inputs():
    return [[torch.randn(1000, K, dtype=DTYPE)]]
