"""fp16 MaxPool2d, 3x3 window, stride 2, padding 1 (a ResNet-stem pool) over NCHW activations."""
import torch
import torch.nn as nn

N, C, H, W = 256, 64, 112, 112
DTYPE = torch.float16
TAGS = ["pooling", "memory-bound", "fp16"]


class Model(nn.Module):
    def __init__(self, kernel_size, stride, padding):
        super().__init__()
        self.pool = nn.MaxPool2d(kernel_size, stride=stride, padding=padding)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(N, C, H, W, dtype=DTYPE)]


def get_init_inputs():
    return [3, 2, 1]


def get_held_out_inputs():
    return [[torch.randn(3, 5, 37, 45, dtype=DTYPE)], [torch.randn(2, 3, 8, 9, dtype=DTYPE)]]
