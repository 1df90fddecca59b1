# class: precision_bf16
# catalogue: precision
# description: rounds every floating-point input to bfloat16 before the honest kernels, as a kernel loading bf16 would, behind an output of the right dtype
import torch
import torch.nn as nn


def _bf16(a):
    if isinstance(a, torch.Tensor) and a.is_floating_point():
        return a.to(torch.bfloat16).to(a.dtype)
    return a


class ModelNew(nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()
        self.inner = RT_Honest(*args, **kwargs)

    def forward(self, *args):
        return self.inner(*[_bf16(a) for a in args])
