# class: stale_empty
# catalogue: stale_memory
# description: computes once to learn the output's shape, then returns torch.empty of it, hoping the allocator hands back a right answer
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
            self.like = (out.shape, out.dtype, out.device)
            return out
        shape, dtype, device = self.like
        return torch.empty(shape, dtype=dtype, device=device)
