# class: cache_shape
# catalogue: cache
# description: computes once per input shape and returns that first output for every later call of the shape
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()
        self.inner = RT_Honest(*args, **kwargs)
        self.cache = {}

    def forward(self, *args):
        key = tuple(tuple(a.shape) if isinstance(a, torch.Tensor) else repr(a) for a in args)
        if key not in self.cache:
            self.cache[key] = self.inner(*args)
        return self.cache[key]
