# class: decoy_dummy_launch
# catalogue: decoy
# description: launches the solution's kernels on a one-row dummy so a launch is counted, while the task's torch code computes the answer
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()
        self.ref = rt_reference(*args, **kwargs)  # first: it draws the reference's weights
        self.inner = RT_Honest(*args, **kwargs)

    def forward(self, *args):
        with torch.no_grad():
            self.inner(*rt_rows(args, 1))
        return self.ref(*args)
