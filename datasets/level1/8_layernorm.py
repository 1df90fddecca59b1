"""LayerNorm with a learnable affine over wide (8192) fp32 rows."""
import torch
import torch.nn as nn

TAGS = ["norm", "reduction", "memory-bound", "fp32"]

M, N = 16384, 8192
DTYPE = torch.float32


class Model(nn.Module):
    def __init__(self, hidden, eps):
        super().__init__()
        self.norm = nn.LayerNorm(hidden, eps=eps)
        with torch.no_grad():
            self.norm.weight.copy_(1.0 + 0.5 * torch.randn(hidden))
            self.norm.bias.copy_(0.5 * torch.randn(hidden))

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    # Per-row offset and scale, so a kernel must really centre and scale each row.
    return [torch.randn(M, N, dtype=DTYPE) * (0.5 + torch.rand(M, 1)) + torch.randn(M, 1) * 3.0]


def get_init_inputs():
    return [N, 1e-5]


def get_held_out_inputs():
    return [[torch.randn(1000, N, dtype=DTYPE) * 2.0 + 1.0]]
