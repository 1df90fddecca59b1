"""Square fp16 matrix multiply, 8192 x 8192 x 8192 (compute-bound, ~1.1 TFLOP)."""
import torch
import torch.nn as nn

N = 8192
DTYPE = torch.float16
TAGS = ["matmul", "gemm", "compute-bound", "fp16"]


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.matmul(a, b)


def get_inputs():
    return [torch.randn(N, N, dtype=DTYPE), torch.randn(N, N, dtype=DTYPE)]


def get_init_inputs():
    return []


def get_held_out_inputs():
    return [[torch.randn(1000, 1500, dtype=DTYPE), torch.randn(1500, 1100, dtype=DTYPE)]]
