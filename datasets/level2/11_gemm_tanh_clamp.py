"""bf16 Linear, tanh, scaled by 2, clamped to [-1.5, 1.5]."""
import torch
import torch.nn as nn

TAGS = ["gemm", "matmul", "activation", "elementwise", "fused", "compute-bound", "bf16"]

M, K, N = 8192, 4096, 4096
DTYPE = torch.bfloat16


class Model(nn.Module):
    def __init__(self, in_features, out_features, scale, limit):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features).to(DTYPE)
        self.scale = scale
        self.limit = limit

    def forward(self, x):
        return torch.clamp(torch.tanh(self.linear(x)) * self.scale, -self.limit, self.limit)


def get_inputs():
    return [torch.randn(M, K, dtype=DTYPE)]


def get_init_inputs():
    return [K, N, 2.0, 1.5]


def get_held_out_inputs():
    return [[torch.randn(1000, K, dtype=DTYPE)]]
