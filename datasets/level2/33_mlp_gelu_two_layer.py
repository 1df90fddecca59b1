"""fp16 two-layer MLP: Linear (d -> 4d), tanh-approximate GELU, Linear (4d -> d)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

TAGS = ["gemm", "matmul", "mlp", "activation", "fused", "compute-bound", "fp16"]

M, D, HIDDEN = 8192, 1024, 4096
DTYPE = torch.float16


class Model(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden).to(DTYPE)
        self.fc2 = nn.Linear(hidden, dim).to(DTYPE)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x), approximate="tanh"))


def get_inputs():
    return [torch.randn(M, D, dtype=DTYPE)]


def get_init_inputs():
    return [D, HIDDEN]


def get_held_out_inputs():
    return [[torch.randn(1000, D, dtype=DTYPE)]]
