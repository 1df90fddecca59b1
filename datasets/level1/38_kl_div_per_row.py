"""fp32 KL divergence per row between two softmax distributions given as logits: KL(softmax(t) || softmax(x)).

Computed as F.kl_div(log_softmax(x), softmax(t), reduction='none').sum(-1) (a per-row
'batchmean' without the final mean, which would be a near-constant scalar). The target
logits get a per-row temperature so the divergences vary widely from row to row.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

N, C = 8192, 8192
DTYPE = torch.float32
TAGS = ["loss", "softmax", "reduction", "memory-bound", "fp32"]
# One value per row; any implementation must at least read both logit matrices once.
MIN_BYTES = 2 * N * C * 4


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, t):
        log_p = F.log_softmax(x, dim=-1)
        q = F.softmax(t, dim=-1)
        return F.kl_div(log_p, q, reduction="none").sum(dim=-1)


def _inputs(n, c):
    x = torch.randn(n, c, dtype=DTYPE)
    t = torch.randn(n, c, dtype=DTYPE) * (0.5 + 1.5 * torch.rand(n, 1, dtype=DTYPE))
    return [x, t]


def get_inputs():
    return _inputs(N, C)


def get_init_inputs():
    return []


def get_held_out_inputs():
    return [_inputs(1000, 3000), _inputs(3, 10007)]
