"""fp16 Linear, LayerNorm over the features, plus a residual input, then ReLU."""
import torch
import torch.nn as nn

TAGS = ["gemm", "matmul", "norm", "residual", "activation", "fused", "compute-bound", "fp16"]

M, K, N = 16384, 4096, 2048
DTYPE = torch.float16


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features).to(DTYPE)
        self.norm = nn.LayerNorm(out_features, eps=1e-5)
        with torch.no_grad():
            self.norm.weight.copy_(1.0 + 0.5 * torch.randn(out_features))
            self.norm.bias.copy_(0.5 * torch.randn(out_features))
        self.norm = self.norm.to(DTYPE)

    def forward(self, x, residual):
        return torch.relu(self.norm(self.linear(x)) + residual)


def get_inputs():
    return [torch.randn(M, K, dtype=DTYPE), torch.randn(M, N, dtype=DTYPE)]


def get_init_inputs():
    return [K, N]


def get_held_out_inputs():
    return [[torch.randn(1000, K, dtype=DTYPE), torch.randn(1000, N, dtype=DTYPE)]]
