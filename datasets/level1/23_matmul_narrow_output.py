"""fp16 matmul with a narrow output: (65536 x 8192) @ (8192 x 64), bound by reading the 1 GB left operand."""
import torch
import torch.nn as nn

M, K, N = 65536, 8192, 64
DTYPE = torch.float16
TAGS = ["matmul", "gemm", "memory-bound", "fp16"]
# The output is 64 columns wide; any implementation must at least read both operands.
MIN_BYTES = (M * K + K * N) * 2


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
    return [[torch.randn(3000, 1000, dtype=DTYPE), torch.randn(1000, 64, dtype=DTYPE)],
            [torch.randn(777, 2050, dtype=DTYPE), torch.randn(2050, 40, dtype=DTYPE)]]
