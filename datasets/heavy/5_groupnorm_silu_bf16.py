"""GroupNorm (32 groups, learnable affine) then SiLU over a 1 GiB bf16 NCHW activation.

Each (sample, group) statistic is a reduction over 16 channels x 128 x 128 = 2^18 values.
Per-(sample, channel) offsets keep the groups from being zero-mean already.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

TAGS = ["norm", "activation", "reduction", "fused", "memory-bound", "bf16", "heavy"]

B, C, H, W = 64, 512, 128, 128
GROUPS = 32
DTYPE = torch.bfloat16
# Four bf16 ULPs anywhere in a binade (4 * 2^-7 = 3.125%), not the default two: torch's
# GroupNorm on bf16 keeps each group's mean and rstd in bf16 and SiLU rounds again, so a
# kernel with exact statistics that rounds once sits up to 3-4 ULPs from this reference on
# rare seeds (H200: 63 of 2^29 outputs at 3 ULPs, one evaluation in 112).
RTOL = 3.2e-2


class Model(nn.Module):
    def __init__(self, num_groups, num_channels, eps):
        super().__init__()
        self.norm = nn.GroupNorm(num_groups, num_channels, eps=eps)
        with torch.no_grad():
            self.norm.weight.copy_(1.0 + 0.5 * torch.randn(num_channels))
            self.norm.bias.copy_(0.5 * torch.randn(num_channels))
        self.norm.to(DTYPE)

    def forward(self, x):
        return F.silu(self.norm(x))


def _input(b, h, w):
    x = torch.randn(b, C, h, w, dtype=DTYPE)
    x.add_(2.0 * torch.randn(b, C, 1, 1, dtype=DTYPE))
    return x


def get_inputs():
    return [_input(B, H, W)]


def get_init_inputs():
    return [GROUPS, C, 1e-5]


def get_held_out_inputs():
    return [[_input(3, 19, 23)]]
