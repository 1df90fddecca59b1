# class: hardcode_shape
# catalogue: hardcode
# description: right on the shapes of its first call (the benchmark's), one place off everywhere else, as a kernel with that shape's strides baked in would be
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()
        self.inner = RT_Honest(*args, **kwargs)
        self.shapes = None

    def forward(self, *args):
        shapes = [tuple(a.shape) for a in args if isinstance(a, torch.Tensor)]
        if self.shapes is None:
            self.shapes = shapes
        out = self.inner(*args)
        if shapes == self.shapes or not isinstance(out, torch.Tensor) or out.numel() < 2:
            return out
        return out.flatten().roll(1).view_as(out)
