"""bf16 squeeze-and-excitation block: global average pool, Linear 256->16, ReLU, Linear 16->256, sigmoid, channel rescale.

Batch 128 at 56 x 56. The input has per-(sample, channel) offsets so the pooled
statistics, and with them the gates, differ between channels and seeds.
"""
import torch
import torch.nn as nn

N, C, H, W, REDUCTION = 128, 256, 56, 56, 16
DTYPE = torch.bfloat16
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
