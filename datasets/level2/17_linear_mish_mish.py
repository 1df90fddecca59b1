"""bf16 Linear followed by mish applied twice: mish(mish(y)), mish(v) = v * tanh(softplus(v))."""
import torch
import torch.nn as nn
import torch.nn.functional as F

TAGS = ["gemm", "matmul", "activation", "fused", "compute-bound", "bf16"]

M, K, N = 8192, 4096, 4096
DTYPE = torch.bfloat16


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features).to(DTYPE)

    def forward(self, x):
        return F.mish(F.mish(self.linear(x)))


def get_inputs():
    # Scaled so the pre-activations span the curved part of mish, not just its linear tail.
    return [2.0 * torch.randn(M, K, dtype=DTYPE)]


def get_init_inputs():
    return [K, N]


def get_held_out_inputs():
    return [[2.0 * torch.randn(1000, K, dtype=DTYPE)]]
