# class: meta_output
# catalogue: lazy_output
# description: returns a tensor on torch's meta device (shape and dtype, no data) after the first call, so there is nothing to compute
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()
        self.inner = RT_Honest(*args, **kwargs)
        self.like = None

    def forward(self, *args):
        if self.like is None:
            out = self.inner(*args)
            self.like = (out.shape, out.dtype)
            return out
        shape, dtype = self.like
        return torch.empty(shape, dtype=dtype, device="meta")
