"""fp16 multi-head self-attention: q/k/v projections, softmax attention over 16 heads of 64, output projection.

Batch 8, sequence 2048, model width 1024, no mask. Attention is F.scaled_dot_product_attention,
whose forward is deterministic.

Weights are normal with std 1 / sqrt(fan_in), doubled for q and k so the attention scores
have a std of about 4: the softmax is peaked rather than nearly uniform. (With
nn.Linear's default init every token attends almost evenly to all 2048, the output is
close to a per-batch constant, and a kernel that just averages v would pass.)
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH, SEQ, D_MODEL, HEADS = 8, 2048, 1024, 16
DTYPE = torch.float16
# The reference is 1.73 of the float16 default tolerance (atol 0.01, rtol 0.01)
# from a float64 run of itself, past it: an exact kernel is rejected on that seed (-0.02618 against
# -0.04391, seed 0; H200, 2026-12-04, `kernelgate tasks check`). Both terms scaled
# to put that at 0.4 of the tolerance, as the check advises.
ATOL = 0.044
RTOL = 0.044
TAGS = ["attention", "softmax", "matmul", "gemm", "compute-bound", "fp16"]


class Model(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.n_heads = n_heads
        self.q = nn.Linear(d_model, d_model)
        self.k = nn.Linear(d_model, d_model)
        self.v = nn.Linear(d_model, d_model)
        self.o = nn.Linear(d_model, d_model)
        with torch.no_grad():
            for fc, gain in ((self.q, 2.0), (self.k, 2.0), (self.v, 1.0), (self.o, 1.0)):
                fc.weight.normal_(0.0, gain / math.sqrt(d_model))
        self.to(DTYPE)

    def forward(self, x):
        b, s, d = x.shape
        h = self.n_heads

        def heads(t):
            return t.view(b, s, h, d // h).transpose(1, 2)
        y = F.scaled_dot_product_attention(heads(self.q(x)), heads(self.k(x)), heads(self.v(x)))
        return self.o(y.transpose(1, 2).reshape(b, s, d))


def get_inputs():
    return [torch.randn(BATCH, SEQ, D_MODEL, dtype=DTYPE)]


def get_init_inputs():
    return [D_MODEL, HEADS]


def get_held_out_inputs():
    return [[torch.randn(3, 333, D_MODEL, dtype=DTYPE)], [torch.randn(1, 1000, D_MODEL, dtype=DTYPE)]]
