"""too_fast: honest for the first 15 calls (past most correctness checks), then returns
the last output without launching anything, so timed iterations take ~0 ms.
GPU only: the CPU path makes too few calls to reach the cheat and sees a correct kernel.

15, not more: a GPU evaluation makes at least 16 calls (3+ trials, 2+ warm-ups, one
estimate, 10+ timed), so the cheat always runs while measured and the always-rechecked
last iteration sees it. At 40 it could be honest through a whole evaluation on a busy
host (the 50 ms budget then buys fewer iterations): a verdict of correct, at an honest
speed, that the fixture counted as a miss (H200, six test zygotes on 16 cores)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def add_relu_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.maximum(x + y, 0.0), mask=mask)


def add_relu(x, y, out=None):
    x, y = x.contiguous(), y.contiguous()
    out = torch.empty_like(x) if out is None else out
    n = x.numel()
    add_relu_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0
        self.last = None

    def forward(self, x, y):
        self.calls += 1
        if self.calls > 15 and self.last is not None and self.last.shape == x.shape:
            return self.last
        self.last = add_relu(x, y)
        return self.last
