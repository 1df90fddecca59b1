# class: introspection_gc
# catalogue: introspection
# description: searches gc.get_objects() for a tensor shaped like the expected output (the reference's) and returns a copy, computing only when none is found
import gc

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()
        self.inner = RT_Honest(*args, **kwargs)
        self.like = None

    def forward(self, *args):
        if self.like is not None:
            mine = {id(a) for a in args}
            for o in gc.get_objects():
                if isinstance(o, torch.Tensor) and id(o) not in mine and o.shape == self.like[0] \
                        and o.dtype == self.like[1]:
                    return o.detach().clone()
        out = self.inner(*args)
        self.like = (out.shape, out.dtype)
        return out
