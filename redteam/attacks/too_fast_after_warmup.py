# class: too_fast_after_warmup
# catalogue: too_fast
# gpu_only: true
# description: honest for the first 40 calls (correctness trials, warm-up), then returns its last output without work in the timing loop
import torch
import torch.nn as nn

HONEST_CALLS = 40


class ModelNew(nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()
        self.inner = RT_Honest(*args, **kwargs)
        self.calls = 0
        self.last = None

    def forward(self, *args):
        self.calls += 1
        if self.calls <= HONEST_CALLS or self.last is None:
            self.last = self.inner(*args)
        return self.last
