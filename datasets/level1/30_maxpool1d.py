"""fp32 MaxPool1d over (N, C, L) sequences: window 5, stride 2, padding 2."""
import torch
import torch.nn as nn

N, C, L = 64, 128, 16384
DTYPE = torch.float32
TAGS = ["pooling", "memory-bound", "fp32"]


class Model(nn.Module):
    def __init__(self, kernel_size, stride, padding):
        super().__init__()
        self.pool = nn.MaxPool1d(kernel_size, stride=stride, padding=padding)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(N, C, L, dtype=DTYPE)]


def get_init_inputs():
    return [5, 2, 2]


def get_held_out_inputs():
    return [[torch.randn(3, 7, 1001, dtype=DTYPE)], [torch.randn(2, 5, 6, dtype=DTYPE)]]
