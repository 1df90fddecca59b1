"""fp32 Linear, then softmax over the features of (logits * scale)."""
import torch
import torch.nn as nn

TAGS = ["gemm", "matmul", "softmax", "reduction", "fused", "compute-bound", "fp32"]

M, K, N = 4096, 2048, 1024
DTYPE = torch.float32


class Model(nn.Module):
    def __init__(self, in_features, out_features, scale):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scale = scale

    def forward(self, x):
        return torch.softmax(self.linear(x) * self.scale, dim=1)


def get_inputs():
    return [torch.randn(M, K, dtype=DTYPE)]


def get_init_inputs():
    return [K, N, 4.0]


def get_held_out_inputs():
    return [[torch.randn(1000, K, dtype=DTYPE)]]
