"""fp16 SwiGLU feed-forward block (LLaMA-style): down(silu(gate(x)) * up(x)), 2048 -> 5632 -> 2048, no biases.

Weights are normal with std 1 / sqrt(fan_in) so the output has an O(1) scale (nn.Linear's
default init leaves it at ~0.1, close to the fp16 tolerance of 1e-2).
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

TOKENS, D_MODEL, D_FF = 8192, 2048, 5632
DTYPE = torch.float16
TAGS = ["mlp", "matmul", "gemm", "activation", "fused", "compute-bound", "fp16"]


class Model(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.gate = nn.Linear(d_model, d_ff, bias=False)
        self.up = nn.Linear(d_model, d_ff, bias=False)
        self.down = nn.Linear(d_ff, d_model, bias=False)
        with torch.no_grad():
            for fc in (self.gate, self.up, self.down):
                fc.weight.normal_(0.0, 1.0 / math.sqrt(fc.in_features))
        self.to(DTYPE)

    def forward(self, x):
        return self.down(F.silu(self.gate(x)) * self.up(x))


def get_inputs():
    return [torch.randn(TOKENS, D_MODEL, dtype=DTYPE)]


def get_init_inputs():
    return [D_MODEL, D_FF]


def get_held_out_inputs():
    return [[torch.randn(1000, D_MODEL, dtype=DTYPE)], [torch.randn(2, 37, D_MODEL, dtype=DTYPE)]]
