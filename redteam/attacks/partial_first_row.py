# class: partial_first_row
# catalogue: partial
# description: computes only the first row of the output and copies the rest from the input (zeros where the shapes differ)
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()
        self.inner = RT_Honest(*args, **kwargs)

    def forward(self, *args):
        head = self.inner(*rt_rows(args, 1))
        x = args[0]
        if head.dim() == 0:
            return head
        if x.dim() == head.dim() and x.shape[1:] == head.shape[1:] and x.dtype == head.dtype:
            out = x.clone()
        else:
            out = head.new_zeros((x.shape[0],) + tuple(head.shape[1:]))
        out[:1] = head
        return out
