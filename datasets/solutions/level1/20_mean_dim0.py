"""Honest solution: a deterministic two-stage column reduction. Stage 1: a grid of (column
block, row split) programs, each summing a ROWS-tall strip in (BM, BN) tiles (coalesced
along the row) into a (SPLIT, N) fp32 workspace; stage 2 adds the SPLIT partials of each
column and divides by M. No atomics, so the result does not depend on scheduling."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def col_partial_kernel(x_ptr, part_ptr, M, N, stride_x, ROWS: tl.constexpr,
                       BM: tl.constexpr, BN: tl.constexpr):
    cols = tl.program_id(0) * BN + tl.arange(0, BN)
    split = tl.program_id(1)
    r0 = split * ROWS
    rows = tl.arange(0, BM)
    col_ok = cols < N
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for i in range(0, ROWS, BM):
        r = (r0 + i + rows).to(tl.int64)
        mask = (r[:, None] < M) & col_ok[None, :]
        acc += tl.load(x_ptr + r[:, None] * stride_x + cols[None, :], mask=mask, other=0.0).to(tl.float32)
    tl.store(part_ptr + split * N + cols, tl.sum(acc, axis=0), mask=col_ok)


@triton.jit
def col_finish_kernel(part_ptr, out_ptr, M, N, SPLIT: tl.constexpr, BN: tl.constexpr):
    cols = tl.program_id(0) * BN + tl.arange(0, BN)
    col_ok = cols < N
    acc = tl.zeros((BN,), dtype=tl.float32)
    for s in range(0, SPLIT):
        acc += tl.load(part_ptr + s * N + cols, mask=col_ok, other=0.0)
    tl.store(out_ptr + cols, (acc / M).to(out_ptr.dtype.element_ty), mask=col_ok)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        M, N = x.shape
        BM, BN = 32, 128
        split = max(1, min(64, triton.cdiv(M, 512)))
        rows = triton.cdiv(triton.cdiv(M, split), BM) * BM
        split = triton.cdiv(M, rows)
        part = torch.empty(split, N, dtype=torch.float32, device=x.device)
        out = torch.empty(N, dtype=x.dtype, device=x.device)
        col_partial_kernel[(triton.cdiv(N, BN), split)](x, part, M, N, x.stride(0), ROWS=rows,
                                                        BM=BM, BN=BN, num_warps=8)
        col_finish_kernel[(triton.cdiv(N, 1024),)](part, out, M, N, SPLIT=split, BN=1024, num_warps=4)
        return out
