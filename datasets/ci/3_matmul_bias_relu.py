"""relu(x @ W^T + b): a small fp32 GEMM with a bias + ReLU epilogue (nn.Linear)."""
import torch
import torch.nn as nn

TAGS = ["matmul", "gemm", "fused", "fp32"]


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return torch.relu(self.linear(x))


def get_inputs():
    return [torch.randn(64, 64)]


def get_init_inputs():
    return [64, 64]


def get_held_out_inputs():
    return [[torch.randn(23, 64)]]
