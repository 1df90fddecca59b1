"""bf16 Linear, BatchNorm1d in inference mode (running stats), then swish: z * sigmoid(z).

The normalisation always uses the running statistics (F.batch_norm with training=False),
whatever mode the module is in, so it folds into a per-feature scale and shift.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

TAGS = ["gemm", "matmul", "norm", "activation", "fused", "compute-bound", "bf16"]

M, K, N = 8192, 4096, 4096
DTYPE = torch.bfloat16
# The reference is 0.90 of the bfloat16 default tolerance (atol 0.01, rtol 0.016)
# from a float64 run of itself, over half of it, where the check warns (2.641 against
# 2.688, seed 0; H200, 2026-12-04, `kernelgate tasks check`). Both terms scaled
# to put that at 0.4 of the tolerance, as the check advises.
ATOL = 0.023
RTOL = 0.036


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.bn = nn.BatchNorm1d(out_features, eps=1e-5)
        with torch.no_grad():
            self.bn.weight.copy_(1.0 + 0.5 * torch.randn(out_features))
            self.bn.bias.copy_(0.5 * torch.randn(out_features))
            self.bn.running_mean.copy_(0.2 * torch.randn(out_features))
            self.bn.running_var.copy_(0.1 + 0.5 * torch.rand(out_features))
        self.linear = self.linear.to(DTYPE)
        self.bn = self.bn.to(DTYPE)

    def forward(self, x):
        z = F.batch_norm(self.linear(x), self.bn.running_mean, self.bn.running_var,
                         self.bn.weight, self.bn.bias, training=False, eps=self.bn.eps)
        return z * torch.sigmoid(z)


def get_inputs():
    return [torch.randn(M, K, dtype=DTYPE)]


def get_init_inputs():
    return [K, N]


def get_held_out_inputs():
    return [[torch.randn(1000, K, dtype=DTYPE)]]
