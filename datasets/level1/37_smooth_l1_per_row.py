"""fp32 smooth L1 (Huber-style) loss per row, beta 0.5: smooth_l1_loss(reduction='none') averaged over the last dim.

Per-row error scales between 0.05 and 2 put some rows mostly in the quadratic zone and
others mostly in the linear zone, so both branches matter and the losses vary per row.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

N, D = 16384, 8192
DTYPE = torch.float32
TAGS = ["loss", "reduction", "memory-bound", "fp32"]
# One value per row; any implementation must at least read both inputs once.
MIN_BYTES = 2 * N * D * 4


class Model(nn.Module):
    def __init__(self, beta):
        super().__init__()
        self.beta = beta

    def forward(self, pred, target):
        return F.smooth_l1_loss(pred, target, reduction="none", beta=self.beta).mean(dim=-1)


def _inputs(n, d):
    pred = torch.randn(n, d, dtype=DTYPE)
    scale = 0.05 + 1.95 * torch.rand(n, 1, dtype=DTYPE)
    return [pred, pred + scale * torch.randn(n, d, dtype=DTYPE)]


def get_inputs():
    return _inputs(N, D)


def get_init_inputs():
    return [0.5]


def get_held_out_inputs():
    return [_inputs(1000, 3000), _inputs(3, 9001)]
