"""fp16 pre-norm transformer decoder block: x + attn(LN(x)) (causal, 16 heads), then + MLP(LN(.)) with GELU.

Batch 8, sequence 1024, width 1024, MLP hidden 4096. Attention is
F.scaled_dot_product_attention (is_causal=True), whose forward is deterministic.

Weights are normal with std 1 / sqrt(fan_in), doubled for the q and k rows of the fused
qkv projection so attention scores have a std of about 4 (a peaked softmax, not a
near-uniform average that a kernel could shortcut). fp16 rather than bf16: a peaked
softmax amplifies rounding of q and k, and bf16's 8-bit mantissa put the reference
itself ~2.5x the 1e-2 tolerance away from an fp32 computation of the same block.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH, SEQ, D_MODEL, HEADS, D_FF = 8, 1024, 1024, 16, 4096
DTYPE = torch.float16
TAGS = ["attention", "norm", "mlp", "residual", "softmax", "matmul", "gemm", "fused", "compute-bound", "fp16"]


class Model(nn.Module):
    def __init__(self, d_model, n_heads, d_ff):
        super().__init__()
        self.n_heads = n_heads
        self.ln1 = nn.LayerNorm(d_model)
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.ln2 = nn.LayerNorm(d_model)
        self.fc1 = nn.Linear(d_model, d_ff)
        self.fc2 = nn.Linear(d_ff, d_model)
        with torch.no_grad():
            for fc in (self.qkv, self.proj, self.fc1, self.fc2):
                fc.weight.normal_(0.0, 1.0 / math.sqrt(fc.in_features))
            self.qkv.weight[: 2 * d_model].mul_(2.0)
            # non-trivial LayerNorm affine parameters
            for ln in (self.ln1, self.ln2):
                ln.weight.copy_(1.0 + 0.1 * torch.randn(d_model))
                ln.bias.copy_(0.1 * torch.randn(d_model))
        self.to(DTYPE)

    def forward(self, x):
        b, s, d = x.shape
        h = self.n_heads
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)

        def heads(t):
            return t.reshape(b, s, h, d // h).transpose(1, 2)
        y = F.scaled_dot_product_attention(heads(q), heads(k), heads(v), is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, s, d))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


def get_inputs():
    return [torch.randn(BATCH, SEQ, D_MODEL, dtype=DTYPE)]


def get_init_inputs():
    return [D_MODEL, HEADS, D_FF]


def get_held_out_inputs():
    return [[torch.randn(3, 333, D_MODEL, dtype=DTYPE)], [torch.randn(1, 1000, D_MODEL, dtype=DTYPE)]]
