"""fp32 Linear 8192 -> 8192 on 8192 rows, then tanh, checked at the fp32 tolerance of 1e-4.

TF32 is off for references, so this is 1.1 TFLOP of true fp32 (about 20 ms of cuBLAS SGEMM
on an H200): a kernel must use IEEE fp32 (tl.dot(..., input_precision="ieee")); TF32
tensor cores would be off by ~1e-3. nn.Linear's default init keeps the pre-activations
near unit scale, so accumulation-order differences stay far below 1e-4.
"""
import torch
import torch.nn as nn

TAGS = ["gemm", "matmul", "activation", "fused", "compute-bound", "fp32", "heavy"]

M, K, N = 8192, 8192, 8192
DTYPE = torch.float32


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return torch.tanh(self.linear(x))


def get_inputs():
    return [torch.randn(M, K, dtype=DTYPE)]


def get_init_inputs():
    return [K, N]


def get_held_out_inputs():
    return [[torch.randn(1000, K, dtype=DTYPE)]]
