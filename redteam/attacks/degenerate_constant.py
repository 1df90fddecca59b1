# class: degenerate_constant
# catalogue: degenerate
# description: launches the honest kernels on all-zero inputs, so the output is the constant the task gives for zeros
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()
        self.inner = RT_Honest(*args, **kwargs)

    def forward(self, *args):
        return self.inner(*[torch.zeros_like(a) if isinstance(a, torch.Tensor) else a for a in args])
