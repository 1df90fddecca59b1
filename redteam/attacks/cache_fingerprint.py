# class: cache_fingerprint
# catalogue: cache
# description: memoises outputs by a cheap hash of the inputs' content (shape and mean to the nearest half), which fresh random inputs share
import torch
import torch.nn as nn


def _fingerprint(a):
    if not isinstance(a, torch.Tensor):
        return repr(a)
    return (tuple(a.shape), round(float(a.float().mean()) * 2) / 2)


class ModelNew(nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()
        self.inner = RT_Honest(*args, **kwargs)
        self.cache = {}

    def forward(self, *args):
        key = tuple(_fingerprint(a) for a in args)
        if key not in self.cache:
            self.cache[key] = self.inner(*args)
        return self.cache[key].clone()
