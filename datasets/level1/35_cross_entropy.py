"""fp32 cross-entropy from logits with integer class targets, one loss per sample (reduction='none').

8192 samples over a 32000-class vocabulary. Logits are 2 * randn so each row's
log-sum-exp varies well beyond the tolerance: a kernel cannot skip it.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

N, C = 8192, 32000
DTYPE = torch.float32
TAGS = ["loss", "softmax", "reduction", "memory-bound", "fp32"]
# One value per row; any implementation must at least read the logits once.
MIN_BYTES = N * C * 4


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits, target):
        return F.cross_entropy(logits, target, reduction="none")


def _inputs(n, c):
    return [2.0 * torch.randn(n, c, dtype=DTYPE), torch.randint(0, c, (n,))]


def get_inputs():
    return _inputs(N, C)


def get_init_inputs():
    return []


def get_held_out_inputs():
    return [_inputs(1000, 3001), _inputs(33, 50257)]
