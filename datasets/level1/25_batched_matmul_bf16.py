"""Batched bf16 matmul (torch.bmm): 128 independent 1024 x 1024 x 1024 products."""
import torch
import torch.nn as nn

B, M, K, N = 128, 1024, 1024, 1024
DTYPE = torch.bfloat16
TAGS = ["matmul", "gemm", "compute-bound", "bf16"]


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.bmm(a, b)


def get_inputs():
    return [torch.randn(B, M, K, dtype=DTYPE), torch.randn(B, K, N, dtype=DTYPE)]


def get_init_inputs():
    return []


def get_held_out_inputs():
    return [[torch.randn(3, 300, 500, dtype=DTYPE), torch.randn(3, 500, 200, dtype=DTYPE)],
            [torch.randn(7, 129, 65, dtype=DTYPE), torch.randn(7, 65, 257, dtype=DTYPE)]]
