"""fp32 margin ranking (pairwise hinge) loss per pair: max(0, -y * (x1 - x2) + margin), reduction='none'.

y is +1 or -1 per pair (from torch.randint); about half the pairs land on the hinge's
zero side and half on its linear side.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

N = 1 << 26
DTYPE = torch.float32
TAGS = ["loss", "elementwise", "memory-bound", "fp32"]


class Model(nn.Module):
    def __init__(self, margin):
        super().__init__()
        self.margin = margin

    def forward(self, x1, x2, y):
        return F.margin_ranking_loss(x1, x2, y, margin=self.margin, reduction="none")


def _inputs(n):
    y = (2 * torch.randint(0, 2, (n,)) - 1).to(DTYPE)
    return [torch.randn(n, dtype=DTYPE), torch.randn(n, dtype=DTYPE), y]


def get_inputs():
    return _inputs(N)


def get_init_inputs():
    return [0.25]


def get_held_out_inputs():
    return [_inputs(1000003), _inputs(77)]
