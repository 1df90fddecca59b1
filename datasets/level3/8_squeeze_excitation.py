"""bf16 squeeze-and-excitation block: global average pool, Linear 256->16, ReLU, Linear 16->256, sigmoid, channel rescale.

Batch 128 at 56 x 56. The input has per-(sample, channel) offsets so the pooled
statistics, and with them the gates, differ between channels and seeds.
"""
import torch
import torch.nn as nn

N, C, H, W, REDUCTION = 128, 256, 56, 56, 16
DTYPE = torch.bfloat16
# The reference is 0.54 of the bfloat16 default tolerance (atol 0.01, rtol 0.016)
# from a float64 run of itself, over half of it, where the check warns (1.18 against
# 1.195, seed 0; H200, 2026-12-04, `kernelgate tasks check`). Both terms scaled
# to put that at 0.4 of the tolerance, as the check advises.
ATOL = 0.014
RTOL = 0.022
TAGS = ["pooling", "reduction", "mlp", "activation", "fused", "memory-bound", "bf16"]


class Model(nn.Module):
    def __init__(self, channels, reduction):
        super().__init__()
        self.fc1 = nn.Linear(channels, channels // reduction)
        self.fc2 = nn.Linear(channels // reduction, channels)
        self.to(DTYPE)

    def forward(self, x):
        s = x.mean(dim=(2, 3))
        s = torch.sigmoid(self.fc2(torch.relu(self.fc1(s))))
        return x * s[:, :, None, None]


def _input(n, h, w):
    return (torch.randn(n, C, h, w) + 2.0 * torch.randn(n, C, 1, 1)).to(DTYPE)


def get_inputs():
    return [_input(N, H, W)]


def get_init_inputs():
    return [C, REDUCTION]


def get_held_out_inputs():
    return [[_input(3, 29, 31)], [_input(2, 7, 7)]]
