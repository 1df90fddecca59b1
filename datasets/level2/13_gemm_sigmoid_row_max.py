"""fp32 Linear, sigmoid, then the max over the output features: output (M, 1).

The sigmoid is monotonic, so max(sigmoid(y)) == sigmoid(max(y)); that is a legitimate
rewrite (it saves exps, not GEMM work). The reduction still needs every logit.
"""
import torch
import torch.nn as nn

TAGS = ["gemm", "matmul", "activation", "reduction", "fused", "compute-bound", "fp32"]

M, K, N = 2048, 2048, 2048
DTYPE = torch.float32
# The output is tiny; any implementation must at least read x and the weight once.
MIN_BYTES = (M * K + N * K) * 4


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return torch.sigmoid(self.linear(x)).amax(dim=1, keepdim=True)


def get_inputs():
    return [torch.randn(M, K, dtype=DTYPE)]


def get_init_inputs():
    return [K, N]


def get_held_out_inputs():
    return [[torch.randn(777, K, dtype=DTYPE)]]
