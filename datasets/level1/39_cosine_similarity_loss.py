"""fp32 cosine-embedding style loss per pair: 1 - cosine_similarity(a, b) over rows of 2048, output (N,).

b is a per-row random mix of a and fresh noise, so the similarities spread over (-1, 1)
instead of all sitting near 0 (independent random vectors are nearly orthogonal).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

N, D = 65536, 2048
DTYPE = torch.float32
TAGS = ["loss", "reduction", "memory-bound", "fp32"]
# One value per row; any implementation must at least read both inputs once.
MIN_BYTES = 2 * N * D * 4


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return 1.0 - F.cosine_similarity(a, b, dim=-1)


def _inputs(n, d):
    a = torch.randn(n, d, dtype=DTYPE)
    mix = 2.0 * torch.randn(n, 1, dtype=DTYPE)
    return [a, mix * a + torch.randn(n, d, dtype=DTYPE)]


def get_inputs():
    return _inputs(N, D)


def get_init_inputs():
    return []


def get_held_out_inputs():
    return [_inputs(1000, 3000), _inputs(3, 5001)]
