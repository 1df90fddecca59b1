"""Honest solution: bf16 tensor-core GEMM with bias + mish(mish(y)) fused into the store.

mish(v) = v * tanh(softplus(v)), and with e = exp(v), tanh(log(1 + e)) = n / (n + 2) where
n = e * (e + 2): one exp and one division per mish instead of exp, log1p and tanh.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _tile_ids(M, N, BM: tl.constexpr, BN: tl.constexpr, GROUP_M: tl.constexpr):
    """(pid_m, pid_n) of this program, in grouped order so neighbours share x rows in L2."""
    pid = tl.program_id(0)
    num_m = tl.cdiv(M, BM)
    num_n = tl.cdiv(N, BN)
    per_group = GROUP_M * num_n
    first_m = (pid // per_group) * GROUP_M
    group_rows = tl.minimum(num_m - first_m, GROUP_M)
    return first_m + (pid % per_group) % group_rows, (pid % per_group) // group_rows


@triton.jit
def _linear_tile(x_ptr, w_ptr, b_ptr, pid_m, pid_n, M, N, K: tl.constexpr,
                 stride_xm, stride_xk, stride_wn, stride_wk,
                 BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, IEEE: tl.constexpr):
    """One (BM, BN) tile of x @ W^T + b, accumulated in fp32.

    K is a constexpr: it is fixed by the weight, and a Python-int loop bound also keeps
    the kernel runnable in Triton's CPU interpreter.
    """
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    # Rows/columns past the edge are wrapped for the loads and masked at the store.
    x_ptrs = x_ptr + (rm % M)[:, None] * stride_xm + rk[None, :] * stride_xk
    w_ptrs = w_ptr + (rn % N)[None, :] * stride_wn + rk[:, None] * stride_wk
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        a = tl.load(x_ptrs, mask=rk[None, :] < K - k0, other=0.0)
        b = tl.load(w_ptrs, mask=rk[:, None] < K - k0, other=0.0)
        if IEEE:
            acc = tl.dot(a, b, acc, input_precision="ieee")
        else:
            acc = tl.dot(a, b, acc)
        x_ptrs += BK * stride_xk
        w_ptrs += BK * stride_wk
    bias = tl.load(b_ptr + rn, mask=rn < N, other=0.0)
    acc += bias.to(tl.float32)[None, :]
    return acc, rm, rn


def _config(dtype):
    """Launch parameters for Hopper (picked by a small sweep on an H200 at the task shapes):
    tensor-core tiles for 16-bit, FMA tiles for IEEE fp32 (no TF32: the tolerance is 1e-4)."""
    if dtype == torch.float32:
        return dict(BM=128, BN=128, BK=32, GROUP_M=8, IEEE=True, num_warps=4, num_stages=2)
    return dict(BM=128, BN=256, BK=64, GROUP_M=8, IEEE=False, num_warps=8, num_stages=3)


@triton.jit
def _mish(v):
    e = tl.exp(tl.minimum(v, 20.0))
    n = e * (e + 2.0)
    return tl.where(v > 20.0, v, v * n / (n + 2.0))


@triton.jit
def linear_mish_mish_kernel(x_ptr, w_ptr, b_ptr, out_ptr, M, N, K: tl.constexpr,
        stride_xm, stride_xk, stride_wn, stride_wk, stride_om, stride_on,
        BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
        GROUP_M: tl.constexpr, IEEE: tl.constexpr):
    pid_m, pid_n = _tile_ids(M, N, BM, BN, GROUP_M)
    y, rm, rn = _linear_tile(x_ptr, w_ptr, b_ptr, pid_m, pid_n, M, N, K, stride_xm, stride_xk,
                             stride_wn, stride_wk, BM, BN, BK, IEEE)
    y = _mish(_mish(y))
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tl.store(out_ptr + rm[:, None] * stride_om + rn[None, :] * stride_on,
             y.to(out_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features).to(torch.bfloat16)

    def forward(self, x):
        w, b = self.linear.weight, self.linear.bias
        x = x.contiguous()
        M, K = x.shape
        N = w.shape[0]
        out = torch.empty((M, N), device=x.device, dtype=x.dtype)
        cfg = _config(x.dtype)
        grid = (triton.cdiv(M, cfg["BM"]) * triton.cdiv(N, cfg["BN"]),)
        linear_mish_mish_kernel[grid](x, w, b, out, M, N, K,
                x.stride(0), x.stride(1), w.stride(0), w.stride(1),
                out.stride(0), out.stride(1), **cfg)
        return out
