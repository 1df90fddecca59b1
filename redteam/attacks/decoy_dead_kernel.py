# class: decoy_dead_kernel
# catalogue: decoy
# description: keeps the solution's Triton kernels defined but never launches them; the task's own torch code computes
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()
        self.ref = rt_reference(*args, **kwargs)

    def forward(self, *args):
        return self.ref(*args)
