"""fp32 Linear, ReLU, then an inclusive prefix sum (cumsum) along the features."""
import torch
import torch.nn as nn

TAGS = ["gemm", "matmul", "activation", "scan", "fused", "compute-bound", "fp32"]

M, K, N = 4096, 2048, 1024
DTYPE = torch.float32


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return torch.cumsum(torch.relu(self.linear(x)), dim=1)


def get_inputs():
    return [torch.randn(M, K, dtype=DTYPE)]


def get_init_inputs():
    return [K, N]


def get_held_out_inputs():
    return [[torch.randn(1000, K, dtype=DTYPE)]]
