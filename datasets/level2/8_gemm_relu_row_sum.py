"""fp32 Linear, ReLU, then the sum over the output features: output (M, 1).

The ReLU sits between the GEMM and the sum on purpose: without it the sum folds into
x @ W.sum(0), a GEMV, which is a task defect rather than a clever kernel.
"""
import torch
import torch.nn as nn

TAGS = ["gemm", "matmul", "activation", "reduction", "fused", "compute-bound", "fp32"]

M, K, N = 2048, 2048, 2048
DTYPE = torch.float32
# The output is tiny; any implementation must at least read x and the weight once.
MIN_BYTES = (M * K + N * K) * 4


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return torch.relu(self.linear(x)).sum(dim=1, keepdim=True)


def get_inputs():
    return [torch.randn(M, K, dtype=DTYPE)]


def get_init_inputs():
    return [K, N]


def get_held_out_inputs():
    return [[torch.randn(1000, K, dtype=DTYPE)]]
