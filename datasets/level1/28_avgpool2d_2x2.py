"""fp32 AvgPool2d, 2x2 window, stride 2, over NCHW activations."""
import torch
import torch.nn as nn

N, C, H, W = 64, 128, 128, 128
DTYPE = torch.float32
TAGS = ["pooling", "memory-bound", "fp32"]


class Model(nn.Module):
    def __init__(self, kernel_size):
        super().__init__()
        self.pool = nn.AvgPool2d(kernel_size)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(N, C, H, W, dtype=DTYPE)]


def get_init_inputs():
    return [2]


def get_held_out_inputs():
    # Odd sizes: the last row/column is dropped (floor mode).
    return [[torch.randn(3, 5, 37, 45, dtype=DTYPE)]]
