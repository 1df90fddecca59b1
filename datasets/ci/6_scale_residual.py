"""x * scale + y with a scalar scale from the constructor (elementwise, two inputs)."""
import torch
import torch.nn as nn

TAGS = ["elementwise", "residual", "fp32"]


class Model(nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x, y):
        return x * self.scale + y


def get_inputs():
    return [torch.randn(64, 256), torch.randn(64, 256)]


def get_init_inputs():
    return [0.75]


def get_held_out_inputs():
    return [[torch.randn(37, 101), torch.randn(37, 101)]]
