"""bf16 Linear, scaled, plus a residual input: linear(x) * scale + residual."""
import torch
import torch.nn as nn

TAGS = ["gemm", "matmul", "elementwise", "residual", "fused", "compute-bound", "bf16"]

M, K, N = 8192, 4096, 4096
DTYPE = torch.bfloat16


class Model(nn.Module):
    def __init__(self, in_features, out_features, scale):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features).to(DTYPE)
        self.scale = scale

    def forward(self, x, residual):
        return self.linear(x) * self.scale + residual


def get_inputs():
    return [torch.randn(M, K, dtype=DTYPE), torch.randn(M, N, dtype=DTYPE)]


def get_init_inputs():
    return [K, N, 0.5]


def get_held_out_inputs():
    return [[torch.randn(1000, K, dtype=DTYPE), torch.randn(1000, N, dtype=DTYPE)]]
