"""Honest solution: both projections in one kernel. Each program loads a tile of x once per
K step and feeds two fp16 tensor-core dots (gate and up, fp32 accumulators); the epilogue
computes silu(gate) * up and writes the output once, so neither 128 MiB projection is
ever stored. K is a constexpr (fixed by the weights; a Python-int loop bound also runs in
the CPU interpreter)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _tile_ids(M, N, BM: tl.constexpr, BN: tl.constexpr, GROUP_M: tl.constexpr):
    """(pid_m, pid_n) of this program, in grouped order."""
    pid = tl.program_id(0)
    num_m = tl.cdiv(M, BM)
    num_n = tl.cdiv(N, BN)
    per_group = GROUP_M * num_n
    first_m = (pid // per_group) * GROUP_M
    group_rows = tl.minimum(num_m - first_m, GROUP_M)
    return first_m + (pid % per_group) % group_rows, (pid % per_group) // group_rows


@triton.jit
def swiglu_gemm_kernel(x_ptr, wg_ptr, wu_ptr, out_ptr, M, N, K: tl.constexpr,
                       stride_xm, stride_wn, stride_om,
                       BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP_M: tl.constexpr):
    pid_m, pid_n = _tile_ids(M, N, BM, BN, GROUP_M)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    x_ptrs = x_ptr + (rm % M).to(tl.int64)[:, None] * stride_xm + rk[None, :]
    w_off = (rn % N).to(tl.int64)[None, :] * stride_wn + rk[:, None]
    g_ptrs = wg_ptr + w_off
    u_ptrs = wu_ptr + w_off
    acc_g = tl.zeros((BM, BN), dtype=tl.float32)
    acc_u = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        a = tl.load(x_ptrs, mask=rk[None, :] < K - k0, other=0.0)
        bg = tl.load(g_ptrs, mask=rk[:, None] < K - k0, other=0.0)
        bu = tl.load(u_ptrs, mask=rk[:, None] < K - k0, other=0.0)
        acc_g = tl.dot(a, bg, acc_g)
        acc_u = tl.dot(a, bu, acc_u)
        x_ptrs += BK
        g_ptrs += BK
        u_ptrs += BK
    y = acc_g / (1.0 + tl.exp(-acc_g)) * acc_u
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tl.store(out_ptr + rm.to(tl.int64)[:, None] * stride_om + rn[None, :],
             y.to(out_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.gate = nn.Linear(in_features, out_features, bias=False).to(torch.float16)
        self.up = nn.Linear(in_features, out_features, bias=False).to(torch.float16)

    def forward(self, x):
        wg, wu = self.gate.weight, self.up.weight  # contiguous (N, K)
        x2 = x.reshape(-1, x.shape[-1]).contiguous()
        M, K = x2.shape
        N = wg.shape[0]
        out = torch.empty((M, N), device=x.device, dtype=x.dtype)
        BM, BN, BK, GROUP_M = 128, 128, 64, 8
        grid = (triton.cdiv(M, BM) * triton.cdiv(N, BN),)
        swiglu_gemm_kernel[grid](x2, wg, wu, out, M, N, K, x2.stride(0), wg.stride(0), out.stride(0),
                                 BM=BM, BN=BN, BK=BK, GROUP_M=GROUP_M, num_warps=8, num_stages=3)
        return out.reshape(*x.shape[:-1], N)
