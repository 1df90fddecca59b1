"""fp16 Linear, hardswish, then GroupNorm over the output features (32 groups, affine)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

TAGS = ["gemm", "matmul", "activation", "norm", "reduction", "fused", "compute-bound", "fp16"]

M, K, N = 16384, 4096, 2048
GROUPS = 32
DTYPE = torch.float16


class Model(nn.Module):
    def __init__(self, in_features, out_features, num_groups):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features).to(DTYPE)
        self.norm = nn.GroupNorm(num_groups, out_features, eps=1e-5)
        with torch.no_grad():
            self.norm.weight.copy_(1.0 + 0.5 * torch.randn(out_features))
            self.norm.bias.copy_(0.5 * torch.randn(out_features))
        self.norm = self.norm.to(DTYPE)

    def forward(self, x):
        return self.norm(F.hardswish(self.linear(x)))


def get_inputs():
    return [torch.randn(M, K, dtype=DTYPE)]


def get_init_inputs():
    return [K, N, GROUPS]


def get_held_out_inputs():
    return [[torch.randn(1000, K, dtype=DTYPE)]]
