"""SwiGLU projection in fp16: silu(x @ Wg^T) * (x @ Wu^T), x 8192 x 8192, two 8192 x 8192 weights.

Two GEMMs of 1.1 TFLOP each; a fused kernel computes both tiles from one read of x and
never writes the two 128 MiB projections. x is scaled by 2 so outputs sit well above the
fp16 tolerance.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

TAGS = ["gemm", "matmul", "activation", "mlp", "fused", "compute-bound", "fp16", "heavy"]

M, K, N = 8192, 8192, 8192
DTYPE = torch.float16


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.gate = nn.Linear(in_features, out_features, bias=False).to(DTYPE)
        self.up = nn.Linear(in_features, out_features, bias=False).to(DTYPE)

    def forward(self, x):
        return F.silu(self.gate(x)) * self.up(x)


def _input(m):
    x = torch.randn(m, K, dtype=DTYPE)
    x.mul_(2.0)
    return x


def get_inputs():
    return [_input(M)]


def get_init_inputs():
    return [K, N]


def get_held_out_inputs():
    return [[_input(1000)]]
