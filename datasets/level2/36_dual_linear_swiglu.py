"""bf16 SwiGLU gate: silu(x @ W_gate^T) * (x @ W_up^T), two bias-free GEMMs sharing one input."""
import torch
import torch.nn as nn
import torch.nn.functional as F

TAGS = ["gemm", "matmul", "mlp", "activation", "fused", "compute-bound", "bf16"]

M, K, N = 8192, 4096, 4096
DTYPE = torch.bfloat16
# The reference is 0.91 of the bfloat16 default tolerance (atol 0.01, rtol 0.016)
# from a float64 run of itself, over half of it, where the check warns (8 against
# 8.125, seed 0; H200, 2026-12-04, `kernelgate tasks check`). Both terms scaled
# to put that at 0.4 of the tolerance, as the check advises.
ATOL = 0.023
RTOL = 0.037


class Model(nn.Module):
    def __init__(self, in_features, hidden_features):
        super().__init__()
        self.gate = nn.Linear(in_features, hidden_features, bias=False).to(DTYPE)
        self.up = nn.Linear(in_features, hidden_features, bias=False).to(DTYPE)

    def forward(self, x):
        return F.silu(self.gate(x)) * self.up(x)


def get_inputs():
    # Scaled so the gate pre-activations span silu's curved region.
    return [2.0 * torch.randn(M, K, dtype=DTYPE)]


def get_init_inputs():
    return [K, N]


def get_held_out_inputs():
    return [[2.0 * torch.randn(1000, K, dtype=DTYPE)]]
