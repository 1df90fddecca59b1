# class: dtype_flip
# catalogue: shape
# description: returns the right values in another dtype (float64), which a value-only comparison would accept
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()
        self.inner = RT_Honest(*args, **kwargs)

    def forward(self, *args):
        out = self.inner(*args)
        return out.to(torch.float64 if out.dtype != torch.float64 else torch.float32)
