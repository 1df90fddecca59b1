# class: precision_fp16
# catalogue: precision
# description: runs the honest kernels on float16 copies of the inputs and parameters and casts the result back to the task's dtype
import copy

import torch
import torch.nn as nn


def _half(a):
    if isinstance(a, torch.Tensor) and a.dtype == torch.float32:
        return a.half()
    return a


class ModelNew(nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()
        self.inner = RT_Honest(*args, **kwargs)
        self.half_inner = None

    def forward(self, *args):
        if self.half_inner is None:
            self.half_inner = copy.deepcopy(self.inner).half()
        out = self.half_inner(*[_half(a) for a in args])
        return out.to(args[0].dtype) if isinstance(args[0], torch.Tensor) else out.float()
