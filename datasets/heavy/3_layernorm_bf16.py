"""LayerNorm with a learnable affine over 131072 bf16 rows of 8192 (2 GiB in, 2 GiB out)."""
import torch
import torch.nn as nn

TAGS = ["norm", "reduction", "memory-bound", "bf16", "heavy"]

M, HIDDEN = 131072, 8192
DTYPE = torch.bfloat16


class Model(nn.Module):
    def __init__(self, hidden, eps):
        super().__init__()
        self.norm = nn.LayerNorm(hidden, eps=eps)
        with torch.no_grad():
            self.norm.weight.copy_(1.0 + 0.5 * torch.randn(hidden))
            self.norm.bias.copy_(0.5 * torch.randn(hidden))
        self.norm.to(DTYPE)

    def forward(self, x):
        return self.norm(x)


def _input(m):
    # Per-row scale and offset (in place: no fp32 temporaries of the whole tensor), so a
    # kernel must really centre and scale each row.
    x = torch.randn(m, HIDDEN, dtype=DTYPE)
    x.mul_(0.5 + torch.rand(m, 1, dtype=DTYPE)).add_(3.0 * torch.randn(m, 1, dtype=DTYPE))
    return x


def get_inputs():
    return [_input(M)]


def get_init_inputs():
    return [HIDDEN, 1e-5]


def get_held_out_inputs():
    return [[_input(999)]]
