"""bf16 Linear, RMSNorm over the features (learnable weight), then SiLU."""
import torch
import torch.nn as nn
import torch.nn.functional as F

TAGS = ["gemm", "matmul", "norm", "activation", "fused", "compute-bound", "bf16"]

M, K, N = 16384, 4096, 2048
DTYPE = torch.bfloat16
# The reference is 0.73 of the bfloat16 default tolerance (atol 0.01, rtol 0.016)
# from a float64 run of itself, over half of it, where the check warns (2.062 against
# 2.094, seed 0; H200, 2026-12-04, `kernelgate tasks check`). Both terms scaled
# to put that at 0.4 of the tolerance, as the check advises.
ATOL = 0.019
RTOL = 0.03


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features).to(DTYPE)
        self.norm = nn.RMSNorm(out_features, eps=1e-6)
        with torch.no_grad():
            self.norm.weight.copy_(1.0 + 0.5 * torch.randn(out_features))
        self.norm = self.norm.to(DTYPE)

    def forward(self, x):
        return F.silu(self.norm(self.linear(x)))


def get_inputs():
    return [torch.randn(M, K, dtype=DTYPE)]


def get_init_inputs():
    return [K, N]


def get_held_out_inputs():
    return [[torch.randn(1000, K, dtype=DTYPE)]]
