"""fp16 Linear (GEMM + bias), exact GELU, plus a residual input (no dropout)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

TAGS = ["gemm", "matmul", "activation", "residual", "fused", "compute-bound", "fp16"]

M, K, N = 8192, 4096, 4096
DTYPE = torch.float16


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features).to(DTYPE)

    def forward(self, x, residual):
        return F.gelu(self.linear(x)) + residual


def get_inputs():
    return [torch.randn(M, K, dtype=DTYPE), torch.randn(M, N, dtype=DTYPE)]


def get_init_inputs():
    return [K, N]


def get_held_out_inputs():
    return [[torch.randn(1000, K, dtype=DTYPE), torch.randn(1000, N, dtype=DTYPE)]]
