"""fp16 Linear to 2N features, a learnable per-column scale, then a GLU split: a * sigmoid(b)."""
import torch
import torch.nn as nn

TAGS = ["gemm", "matmul", "activation", "elementwise", "fused", "compute-bound", "fp16"]

M, K, N = 8192, 4096, 4096
DTYPE = torch.float16


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        # out_features is the GLU output width; the GEMM produces twice that.
        self.linear = nn.Linear(in_features, 2 * out_features).to(DTYPE)
        self.scale = nn.Parameter((1.0 + 0.5 * torch.randn(2 * out_features)).to(DTYPE))

    def forward(self, x):
        y = self.linear(x) * self.scale
        a, b = y.chunk(2, dim=1)
        return a * torch.sigmoid(b)


def get_inputs():
    return [torch.randn(M, K, dtype=DTYPE)]


def get_init_inputs():
    return [K, N]


def get_held_out_inputs():
    return [[torch.randn(1000, K, dtype=DTYPE)]]
