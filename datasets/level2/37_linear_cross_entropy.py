"""fp32 Linear classifier head, then per-row cross-entropy against integer targets: output (M,)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

TAGS = ["gemm", "matmul", "loss", "softmax", "reduction", "fused", "compute-bound", "fp32"]

M, K, N = 4096, 2048, 2048
DTYPE = torch.float32
# The output is one value per row; any implementation must at least read x and the weight.
MIN_BYTES = (M * K + N * K) * 4 + M * 8


class Model(nn.Module):
    def __init__(self, in_features, num_classes, scale):
        super().__init__()
        self.linear = nn.Linear(in_features, num_classes)
        self.scale = scale

    def forward(self, x, target):
        return F.cross_entropy(self.linear(x) * self.scale, target, reduction="none")


def get_inputs():
    return [torch.randn(M, K, dtype=DTYPE), torch.randint(0, N, (M,))]


def get_init_inputs():
    return [K, N, 4.0]


def get_held_out_inputs():
    return [[torch.randn(1000, K, dtype=DTYPE), torch.randint(0, N, (1000,))]]
