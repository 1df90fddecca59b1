# class: decoy_try_except
# catalogue: decoy
# description: tries the solution's kernels on inputs they cannot take (the meta device) and falls back to torch in the except branch
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()
        self.ref = rt_reference(*args, **kwargs)
        self.inner = RT_Honest(*args, **kwargs)

    def forward(self, *args):
        try:
            return self.inner(*[a.to("meta") if isinstance(a, torch.Tensor) else a for a in args])
        except Exception:
            return self.ref(*args)
