"""fp16 batched matmul a @ b (B, M, K) x (B, K, N), plus a learnable per-column bias, then ReLU."""
import torch
import torch.nn as nn

TAGS = ["matmul", "activation", "fused", "compute-bound", "fp16"]

B, M, K, N = 64, 1024, 1024, 1024
DTYPE = torch.float16


class Model(nn.Module):
    def __init__(self, out_features):
        super().__init__()
        self.bias = nn.Parameter((0.5 * torch.randn(out_features)).to(DTYPE))

    def forward(self, a, b):
        return torch.relu(torch.bmm(a, b) + self.bias)


def get_inputs():
    # b is scaled so the products stay O(1) whatever K is.
    return [torch.randn(B, M, K, dtype=DTYPE), torch.randn(B, K, N, dtype=DTYPE) / K ** 0.5]


def get_init_inputs():
    return [N]


def get_held_out_inputs():
    return [[torch.randn(3, 333, K, dtype=DTYPE), torch.randn(3, K, N, dtype=DTYPE) / K ** 0.5]]
