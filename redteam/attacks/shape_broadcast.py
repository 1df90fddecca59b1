# class: shape_broadcast
# catalogue: shape
# description: returns the right values with a leading singleton dimension ([1, B, N] for [B, N]), which broadcasting would accept
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()
        self.inner = RT_Honest(*args, **kwargs)

    def forward(self, *args):
        return self.inner(*args).unsqueeze(0)
