"""Log-softmax over the last dimension of an fp16 matrix (16384-wide rows)."""
import torch
import torch.nn as nn

TAGS = ["softmax", "reduction", "memory-bound", "fp16"]

M, N = 16384, 16384
DTYPE = torch.float16


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.log_softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(M, N, dtype=DTYPE) * 2.0]


def get_init_inputs():
    return []


def get_held_out_inputs():
    return [[torch.randn(1000, 3001, dtype=DTYPE) * 2.0]]
