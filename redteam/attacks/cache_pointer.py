# class: cache_pointer
# catalogue: cache
# description: memoises each output by its inputs' data_ptr and returns it whenever the same storage comes back
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()
        self.inner = RT_Honest(*args, **kwargs)
        self.cache = {}

    def forward(self, *args):
        key = tuple(a.data_ptr() if isinstance(a, torch.Tensor) else repr(a) for a in args)
        if key not in self.cache:
            self.cache[key] = self.inner(*args)
        return self.cache[key]
