"""LayerNorm over the last dimension (with learnable affine) of a 2-D fp32 tensor."""
import torch
import torch.nn as nn

TAGS = ["norm", "reduction", "fp32"]


class Model(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.norm = nn.LayerNorm(hidden, eps=1e-5)
        with torch.no_grad():
            # Non-trivial affine parameters so a kernel that ignores them is wrong.
            self.norm.weight.copy_(1.0 + 0.5 * torch.randn(hidden))
            self.norm.bias.copy_(0.5 * torch.randn(hidden))

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(48, 128) * 2.0 + 0.5]


def get_init_inputs():
    return [128]


def get_held_out_inputs():
    return [[torch.randn(37, 128) * 2.0 + 0.5]]
