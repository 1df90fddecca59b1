"""Mean of softplus over 2^29 fp32 values (2 GiB) to one scalar, checked at 1e-4.

A full reduction behind a nonlinearity: the softplus leaves no linear shortcut. The
input's scale and offset are drawn per seed, so the mean changes with the seed instead of
converging to one constant (the mean over 10^8 standard normals alone would not).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

TAGS = ["reduction", "activation", "memory-bound", "fp32", "heavy"]

M, N = 32768, 16384
DTYPE = torch.float32
# The output is one value; any implementation must read the whole input once.
MIN_BYTES = M * N * 4


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.softplus(x).mean()


def _input(m, n):
    x = torch.randn(m, n, dtype=DTYPE)
    x.mul_(0.5 + 2.0 * torch.rand(())).add_(torch.randn(()))
    return x


def get_inputs():
    return [_input(M, N)]


def get_init_inputs():
    return []


def get_held_out_inputs():
    return [[_input(1000, 777)]]
