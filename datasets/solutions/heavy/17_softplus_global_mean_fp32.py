"""Honest solution: two deterministic stages. Stage 1: each program sums softplus over
ITERS blocks of the flat input into one fp32 partial (softplus(x) = max(x, 0) +
log(1 + exp(-|x|)), stable for any x); stage 2: one program adds the partials in a fixed
order and divides by the count. No atomics, so the result is the same on every run."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softplus_partial_kernel(x_ptr, part_ptr, n, BLOCK: tl.constexpr, ITERS: tl.constexpr):
    pid = tl.program_id(0)
    start = pid.to(tl.int64) * (BLOCK * ITERS)
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for i in range(ITERS):
        idx = start + i * BLOCK + offs
        mask = idx < n
        x = tl.load(x_ptr + idx, mask=mask, other=0.0).to(tl.float32)
        sp = tl.maximum(x, 0.0) + tl.log(1.0 + tl.exp(-tl.abs(x)))
        acc += tl.where(mask, sp, 0.0)
    tl.store(part_ptr + pid, tl.sum(acc, axis=0))


@triton.jit
def mean_of_partials_kernel(part_ptr, out_ptr, P: tl.constexpr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, P, BLOCK):
        idx = start + offs
        acc += tl.load(part_ptr + idx, mask=idx < P, other=0.0)
    tl.store(out_ptr, (tl.sum(acc, axis=0) / n).to(out_ptr.dtype.element_ty))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        n = x.numel()
        BLOCK, ITERS = 4096, 16
        P = triton.cdiv(n, BLOCK * ITERS)
        part = torch.empty(P, device=x.device, dtype=torch.float32)
        softplus_partial_kernel[(P,)](x, part, n, BLOCK=BLOCK, ITERS=ITERS, num_warps=8)
        out = torch.empty((), device=x.device, dtype=x.dtype)
        mean_of_partials_kernel[(1,)](part, out, P=P, n=n, BLOCK=1024, num_warps=4)
        return out
