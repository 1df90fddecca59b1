"""The judge's floating-point comparison of two outputs in one pass on the GPU.

kgharness.correctness compares |out - ref| <= atol + rtol * |ref| element by element.
Done with torch ops, chunk by chunk, a 1 GiB bf16 output took 37 ms on an H200 (about
twenty passes over float32 temporaries and six host syncs per 16M elements). Every
evaluation compares about nine times (each correctness seed, the held-out sets, the
timed calls the window verifies), all in the GPU's one judge service, and a verify runs
inside the timing window while every other evaluation on the GPU is stopped. This
kernel reads both outputs once and writes a few numbers per block; one sync returns the
figures the torch path returns, the same for every element: NaN differences count as
infinitely wrong, the work is in float64 for float32 and float64 outputs as there.

Runs in the judge service only (trusted code): its Triton cache is the service's own
(kgharness.zygote.judgesvc), so no candidate can put a compiled kernel there.
"""

import torch
import triton
import triton.language as tl

BLOCK = 4096
FLOATS = (torch.float16, torch.bfloat16, torch.float32, torch.float64)   # what the kernel compares


@triton.jit
def _compare_blocks(o_ptr, r_ptr, n, tol_ptr, counts_ptr, vals_ptr, idx_ptr,
                    WIDE: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    atol = tl.load(tol_ptr)         # float64, or float32 like the torch path's float32 work
    rtol = tl.load(tol_ptr + 1)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    o = tl.load(o_ptr + offs, mask=mask, other=0.0)
    r = tl.load(r_ptr + offs, mask=mask, other=0.0)
    if WIDE:
        o = o.to(tl.float64)
        r = r.to(tl.float64)
    else:
        o = o.to(tl.float32)
        r = r.to(tl.float32)
    inf = float("inf")
    diff = tl.abs(o - r)
    diff = tl.where(diff != diff, inf, diff)          # NaN counts as worst
    aref = tl.abs(r)
    excess = diff - (aref * rtol + atol)
    bad = (excess > 0) & mask
    nonfinite = ((o != o) | (tl.abs(o) == inf)) & mask
    rel = diff / (aref + 1e-12)
    rel = tl.where(mask & (rel == rel), rel, 0.0)      # inf/inf: no ratio
    excess = tl.where(mask & (excess == excess), excess, -inf)
    worst, at = tl.max(excess, axis=0, return_indices=True, return_indices_tie_break_left=True)
    tl.store(counts_ptr + pid * 2, tl.sum(bad.to(tl.int32), axis=0))
    tl.store(counts_ptr + pid * 2 + 1, tl.sum(nonfinite.to(tl.int32), axis=0))
    tl.store(vals_ptr + pid * 4, tl.max(tl.where(mask, diff, 0.0), axis=0))
    tl.store(vals_ptr + pid * 4 + 1, tl.max(rel, axis=0))
    tl.store(vals_ptr + pid * 4 + 2, tl.max(tl.where(mask, aref, 0.0), axis=0))
    tl.store(vals_ptr + pid * 4 + 3, worst)
    tl.store(idx_ptr + pid, at)


def usable(o, r):
    """The kernel applies: floating outputs of one dtype, contiguous, on a GPU (or any
    device under Triton's interpreter, which the CPU tests use)."""
    return (o.dtype == r.dtype and r.dtype in FLOATS and o.is_contiguous() and r.is_contiguous()
            and o.numel() == r.numel() and o.device == r.device)


def stats(o, r, atol, rtol, work):
    """(n_bad, n_nonfinite, max_abs, max_rel, max_ref, worst index, worst excess) of the
    flat tensors o (the candidate's) and r (the reference's), computed in `work`
    (torch.float32 or float64: kgharness.correctness.work_dtype): kgharness.correctness's
    figures. One host sync."""
    n = r.numel()
    blocks = triton.cdiv(n, BLOCK)
    # The tolerances in the work precision, as torch's scalar arithmetic uses them (a
    # Python float argument would reach the kernel as a float32).
    tol = torch.tensor([float(atol), float(rtol)], dtype=work, device=r.device)
    counts = torch.empty((blocks, 2), dtype=torch.int32, device=r.device)
    vals = torch.empty((blocks, 4), dtype=work, device=r.device)
    idx = torch.empty(blocks, dtype=torch.int32, device=r.device)
    _compare_blocks[(blocks,)](o, r, n, tol, counts, vals, idx,
                               WIDE=work == torch.float64, BLOCK=BLOCK, num_warps=8)
    totals = counts.sum(dim=0, dtype=torch.int64)
    b = torch.argmax(vals[:, 3])
    worst = b.to(torch.int64) * BLOCK + idx[b].to(torch.int64)
    row = torch.stack([totals[0].double(), totals[1].double(), vals[:, 0].max().double(),
                       vals[:, 1].max().double(), vals[:, 2].max().double(), worst.double(),
                       vals[b, 3].double()]).tolist()
    return int(row[0]), int(row[1]), row[2], row[3], row[4], int(row[5]), row[6]
