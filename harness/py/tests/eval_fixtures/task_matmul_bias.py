import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, k, n):
        super().__init__()
        self.linear = nn.Linear(k, n)

    def forward(self, x):
        return self.linear(x)


def get_inputs():
    return [torch.randn(32, 64)]


def get_init_inputs():
    return [64, 48]
