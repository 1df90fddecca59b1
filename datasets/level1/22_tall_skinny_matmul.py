"""Tall-skinny fp16 matmul: (131072 x 64) @ (64 x 4096), bound by writing the 1 GB output."""
import torch
import torch.nn as nn

M, K, N = 131072, 64, 4096
DTYPE = torch.float16
TAGS = ["matmul", "gemm", "memory-bound", "fp16"]


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.matmul(a, b)


def get_inputs():
    return [torch.randn(M, K, dtype=DTYPE), torch.randn(K, N, dtype=DTYPE)]


def get_init_inputs():
    return []


def get_held_out_inputs():
    return [[torch.randn(5000, 48, dtype=DTYPE), torch.randn(48, 1000, dtype=DTYPE)],
            [torch.randn(3001, 70, dtype=DTYPE), torch.randn(70, 333, dtype=DTYPE)]]
