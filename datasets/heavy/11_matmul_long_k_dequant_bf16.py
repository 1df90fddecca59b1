"""Long-K bf16 matmul with a dequantisation epilogue: (a @ b) * row_scale[:, None] * col_scale.

a is 4096 x 65536, b 65536 x 4096 (512 MiB each), the output 4096 x 4096: 2.2 TFLOP with
few output tiles per K step, where split-K or a deep pipeline pays. The scales are fp32
and applied in fp32 before one rounding to bf16, as a quantised GEMM's epilogue does.
"""
import torch
import torch.nn as nn

TAGS = ["matmul", "fused", "compute-bound", "bf16", "heavy"]

M, K, N = 4096, 65536, 4096
DTYPE = torch.bfloat16


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b, row_scale, col_scale):
        acc = torch.matmul(a, b).float()
        return (acc * row_scale[:, None] * col_scale[None, :]).to(a.dtype)


def _inputs(m, k, n):
    # a @ b has standard deviation sqrt(k); the row scales bring it to about 1.
    row_scale = (0.5 + torch.rand(m)) / k ** 0.5
    col_scale = 0.5 + torch.rand(n)
    return [torch.randn(m, k, dtype=DTYPE), torch.randn(k, n, dtype=DTYPE), row_scale, col_scale]


def get_inputs():
    return _inputs(M, K, N)


def get_init_inputs():
    return []


def get_held_out_inputs():
    return [_inputs(1000, 3000, 1500)]
