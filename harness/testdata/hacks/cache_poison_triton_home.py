"""cache_poison: plants a fake entry in the shared Triton cache (~/.triton/cache of the
gateway user, and next to $TRITON_CACHE_DIR when set) so a later evaluation would load
it. Writes outside its temp dir fail under Landlock; the kernel itself is honest."""
import os
import pwd
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
        homes = {os.path.expanduser("~"), pwd.getpwuid(os.getuid()).pw_dir}
        targets = [os.path.join(h, ".triton", "cache", "kernelgate_poison") for h in sorted(homes)]
        if os.environ.get("TRITON_CACHE_DIR"):
            targets.append(os.path.join(os.path.dirname(os.environ["TRITON_CACHE_DIR"].rstrip("/")), "kernelgate_poison"))
        for d in targets:
            try:
                os.makedirs(d, exist_ok=True)
                with open(os.path.join(d, "add_relu_kernel.json"), "w") as f:
                    f.write('{"name": "add_relu_kernel", "poisoned": true}')
            except OSError:
                pass
        return add_relu(x, y)
