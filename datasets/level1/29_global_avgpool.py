"""bf16 global average pool (AdaptiveAvgPool2d to 1x1) over NCHW activations: output (N, C, 1, 1).

The input carries a per-(sample, channel) offset so the means differ from seed to seed
and from channel to channel, instead of all sitting near 0.
"""
import torch
import torch.nn as nn

N, C, H, W = 256, 256, 56, 56
DTYPE = torch.bfloat16
TAGS = ["pooling", "reduction", "memory-bound", "bf16"]
# The output is one value per plane; any implementation must at least read the input once.
MIN_BYTES = N * C * H * W * 2


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2d(1)

    def forward(self, x):
        return self.pool(x)


def _input(n, c, h, w):
    return (torch.randn(n, c, h, w) + 2.0 * torch.randn(n, c, 1, 1)).to(DTYPE)


def get_inputs():
    return [_input(N, C, H, W)]


def get_init_inputs():
    return []


def get_held_out_inputs():
    return [[_input(3, 37, 29, 31)], [_input(5, 19, 7, 7)]]
