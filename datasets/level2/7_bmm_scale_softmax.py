"""fp16 attention scores: softmax(q @ k^T * scale) over the keys, batched (B, S, S)."""
import torch
import torch.nn as nn

TAGS = ["matmul", "softmax", "attention", "reduction", "fused", "memory-bound", "fp16"]

B, S, D = 48, 2048, 64
DTYPE = torch.float16


class Model(nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, q, k):
        scores = torch.bmm(q, k.transpose(1, 2)) * self.scale
        return torch.softmax(scores, dim=-1)


def get_inputs():
    return [torch.randn(B, S, D, dtype=DTYPE), torch.randn(B, S, D, dtype=DTYPE)]


def get_init_inputs():
    # 0.5 (not 1/sqrt(D)) keeps the distributions peaked, so the probabilities are
    # well above the fp16 tolerance and an all-zeros output cannot pass.
    return [0.5]


def get_held_out_inputs():
    return [[torch.randn(3, 333, D, dtype=DTYPE), torch.randn(3, 333, D, dtype=DTYPE)]]
