"""bf16 Linear followed by swish: y * sigmoid(y)."""
import torch
import torch.nn as nn

TAGS = ["gemm", "matmul", "activation", "fused", "compute-bound", "bf16"]

M, K, N = 8192, 4096, 4096
DTYPE = torch.bfloat16


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features).to(DTYPE)

    def forward(self, x):
        y = self.linear(x)
        return y * torch.sigmoid(y)


def get_inputs():
    return [torch.randn(M, K, dtype=DTYPE)]


def get_init_inputs():
    return [K, N]


def get_held_out_inputs():
    return [[torch.randn(1000, K, dtype=DTYPE)]]
