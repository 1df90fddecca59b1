"""bf16 Linear 8192 -> 8192 on 16384 rows, then tanh-approximate GELU.

2.2 TFLOP: about 3 ms of cuBLAS on an H200. A fused kernel applies bias and GELU to the
fp32 accumulator and writes the 256 MiB output once. (No residual add here: with bf16
rounding after each step, gelu(y) + x cancelling to ~0 would leave the reference itself
more than the tolerance away from an exact kernel.)
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

TAGS = ["gemm", "matmul", "activation", "fused", "compute-bound", "bf16", "heavy"]

M, K, N = 16384, 8192, 8192
DTYPE = torch.bfloat16


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features).to(DTYPE)

    def forward(self, x):
        return F.gelu(self.linear(x), approximate="tanh")


def _input(m):
    x = torch.randn(m, K, dtype=DTYPE)
    x.mul_(2.0)  # pre-activations of standard deviation ~1.2: most outputs well above 1e-2
    return x


def get_inputs():
    return [_input(M)]


def get_init_inputs():
    return [K, N]


def get_held_out_inputs():
    return [[_input(1000)]]
