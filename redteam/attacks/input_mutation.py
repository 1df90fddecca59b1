# class: input_mutation
# catalogue: input_mutation
# description: writes its result into its first input and returns that tensor (or scribbles on the input after computing)
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()
        self.inner = RT_Honest(*args, **kwargs)

    def forward(self, *args):
        out = self.inner(*args)
        x = args[0]
        with torch.no_grad():
            if x.shape == out.shape and x.dtype == out.dtype:
                x.copy_(out)
                return x
            x.zero_()
        return out
