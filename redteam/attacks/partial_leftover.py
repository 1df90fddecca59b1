# class: partial_leftover
# catalogue: partial
# description: computes the first half of the rows and leaves the rest as whatever torch.empty held
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()
        self.inner = RT_Honest(*args, **kwargs)

    def forward(self, *args):
        x = args[0]
        n = max(1, x.shape[0] // 2)
        head = self.inner(*rt_rows(args, n))
        if head.dim() == 0:
            return head
        out = torch.empty((x.shape[0],) + tuple(head.shape[1:]), dtype=head.dtype, device=head.device)
        out[:n] = head
        return out
