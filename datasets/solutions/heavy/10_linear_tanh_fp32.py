"""Honest solution: an IEEE-fp32 GEMM (tl.dot with input_precision="ieee": no TF32, which
would miss the 1e-4 tolerance) with bias and tanh applied to the accumulator. K is a
constexpr (fixed by the weight; a Python-int loop bound also runs in the CPU interpreter)."""
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
def linear_tanh_kernel(x_ptr, w_ptr, b_ptr, out_ptr, M, N, K: tl.constexpr,
                       stride_xm, stride_wn, stride_om,
                       BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP_M: tl.constexpr):
    pid_m, pid_n = _tile_ids(M, N, BM, BN, GROUP_M)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    x_ptrs = x_ptr + (rm % M).to(tl.int64)[:, None] * stride_xm + rk[None, :]
    w_ptrs = w_ptr + (rn % N).to(tl.int64)[None, :] * stride_wn + rk[:, None]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        a = tl.load(x_ptrs, mask=rk[None, :] < K - k0, other=0.0)
        b = tl.load(w_ptrs, mask=rk[:, None] < K - k0, other=0.0)
        acc = tl.dot(a, b, acc, input_precision="ieee")
        x_ptrs += BK
        w_ptrs += BK
    y = acc + tl.load(b_ptr + rn, mask=rn < N, other=0.0)[None, :]
    y = 1.0 - 2.0 / (tl.exp(2.0 * y) + 1.0)  # tanh(y), saturating cleanly for large |y|
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tl.store(out_ptr + rm.to(tl.int64)[:, None] * stride_om + rn[None, :], y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        w, b = self.linear.weight, self.linear.bias  # contiguous (N, K)
        x2 = x.reshape(-1, x.shape[-1]).contiguous()
        M, K = x2.shape
        N = w.shape[0]
        out = torch.empty((M, N), device=x.device, dtype=x.dtype)
        # FMA tiles (no tensor cores for IEEE fp32).
        BM, BN, BK, GROUP_M = 128, 128, 32, 8
        grid = (triton.cdiv(M, BM) * triton.cdiv(N, BN),)
        linear_tanh_kernel[grid](x2, w, b, out, M, N, K, x2.stride(0), w.stride(0), out.stride(0),
                                 BM=BM, BN=BN, BK=BK, GROUP_M=GROUP_M, num_warps=4, num_stages=2)
        return out.reshape(*x.shape[:-1], N)
