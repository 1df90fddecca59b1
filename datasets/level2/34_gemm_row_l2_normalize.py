"""fp32 Linear, then each row divided by its L2 norm (F.normalize over the features)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

TAGS = ["gemm", "matmul", "norm", "reduction", "fused", "compute-bound", "fp32"]

M, K, N = 4096, 2048, 1024
DTYPE = torch.float32


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return F.normalize(self.linear(x), p=2.0, dim=1, eps=1e-12)


def get_inputs():
    return [torch.randn(M, K, dtype=DTYPE)]


def get_init_inputs():
    return [K, N]


def get_held_out_inputs():
    return [[torch.randn(1000, K, dtype=DTYPE)]]
