"""SwiGLU gate over bf16 activations: silu(gate) * up, 16384 x 32768 (1 GiB a tensor).

Memory-bound: 2 GiB read, 1 GiB written. The gate is scaled by 2 so the outputs are well
above the bf16 tolerance of 1e-2.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

TAGS = ["activation", "elementwise", "fused", "memory-bound", "bf16", "heavy"]

M, N = 16384, 32768
DTYPE = torch.bfloat16


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, gate, up):
        return F.silu(gate) * up


def _inputs(m, n):
    gate = torch.randn(m, n, dtype=DTYPE)
    gate.mul_(2.0)
    return [gate, torch.randn(m, n, dtype=DTYPE)]


def get_inputs():
    return _inputs(M, N)


def get_init_inputs():
    return []


def get_held_out_inputs():
    return [_inputs(37, 3001)]
