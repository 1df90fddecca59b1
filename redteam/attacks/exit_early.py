# class: exit_early
# catalogue: exit
# description: calls os._exit(0) in forward, so a harness that trusts a clean exit code would count a success
import os

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()
        self.inner = RT_Honest(*args, **kwargs)

    def forward(self, *args):
        os._exit(0)
