"""RMSNorm over the last dimension with a learnable weight: x / sqrt(mean(x^2) + eps) * w."""
import torch
import torch.nn as nn

TAGS = ["norm", "reduction", "fp32"]


class Model(nn.Module):
    def __init__(self, hidden, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1.0 + 0.5 * torch.randn(hidden))

    def forward(self, x):
        rms = torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return x * rms * self.weight


def get_inputs():
    return [torch.randn(32, 256)]


def get_init_inputs():
    return [256, 1e-6]


def get_held_out_inputs():
    return [[torch.randn(13, 256)]]
