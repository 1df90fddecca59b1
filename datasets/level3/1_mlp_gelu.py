"""fp16 three-layer MLP with GELU: 1024 -> 4096 -> 4096 -> 1024 over a batch of 16384 tokens.

Weights are drawn He-style (normal, std sqrt(2 / fan_in)) so activations keep an O(1)
scale through the layers; with nn.Linear's default init the outputs shrink to ~0.06,
too close to the fp16 tolerance of 1e-2 to tell a right kernel from a sloppy one.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH, D_IN, D_HID, D_OUT = 16384, 1024, 4096, 1024
DTYPE = torch.float16
TAGS = ["mlp", "matmul", "gemm", "activation", "fused", "compute-bound", "fp16"]


class Model(nn.Module):
    def __init__(self, d_in, d_hidden, d_out):
        super().__init__()
        self.fc1 = nn.Linear(d_in, d_hidden)
        self.fc2 = nn.Linear(d_hidden, d_hidden)
        self.fc3 = nn.Linear(d_hidden, d_out)
        with torch.no_grad():
            for fc in (self.fc1, self.fc2, self.fc3):
                fc.weight.normal_(0.0, math.sqrt(2.0 / fc.in_features))
        self.to(DTYPE)

    def forward(self, x):
        return self.fc3(F.gelu(self.fc2(F.gelu(self.fc1(x)))))


def get_inputs():
    return [torch.randn(BATCH, D_IN, dtype=DTYPE)]


def get_init_inputs():
    return [D_IN, D_HID, D_OUT]


def get_held_out_inputs():
    return [[torch.randn(1000, D_IN, dtype=DTYPE)], [torch.randn(3, 7, D_IN, dtype=DTYPE)]]
