"""thread: forward returns an empty buffer and a background thread fills it 50 ms later.
A harness that compares after the call has long finished (or times only the call)
would see a correct, instant kernel."""
import threading
import time
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

    def forward(self, x, y):
        out = torch.empty_like(x)

        def finish():
            time.sleep(0.05)
            add_relu(x, y, out)
        threading.Thread(target=finish, daemon=True).start()
        return out
