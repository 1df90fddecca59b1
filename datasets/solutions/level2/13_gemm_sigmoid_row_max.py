"""Honest solution: IEEE-fp32 GEMM + bias; each tile reduces its rows to a max logit and
atomically maxes sigmoid(max) into the output (sigmoid is monotonic, so this equals the
max of the sigmoids; max is order-independent, so the atomics stay deterministic)."""
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
def linear_sigmoid_rowmax_kernel(x_ptr, w_ptr, b_ptr, out_ptr, M, N, K: tl.constexpr,
        stride_xm, stride_xk, stride_wn, stride_wk,
        BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
        GROUP_M: tl.constexpr, IEEE: tl.constexpr):
    pid_m, pid_n = _tile_ids(M, N, BM, BN, GROUP_M)
    y, rm, rn = _linear_tile(x_ptr, w_ptr, b_ptr, pid_m, pid_n, M, N, K, stride_xm, stride_xk,
                             stride_wn, stride_wk, BM, BN, BK, IEEE)
    y = tl.where(rn[None, :] < N, y, float("-inf"))
    row_max = tl.max(y, axis=1)
    tl.atomic_max(out_ptr + rm, tl.sigmoid(row_max), mask=rm < M)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        w, b = self.linear.weight, self.linear.bias
        x = x.contiguous()
        M, K = x.shape
        N = w.shape[0]
        # sigmoid > 0, so 0 is a neutral start for the max.
        out = torch.zeros((M,), device=x.device, dtype=torch.float32)
        cfg = _config(x.dtype)
        grid = (triton.cdiv(M, cfg["BM"]) * triton.cdiv(N, cfg["BN"]),)
        linear_sigmoid_rowmax_kernel[grid](x, w, b, out, M, N, K,
                x.stride(0), x.stride(1), w.stride(0), w.stride(1), **cfg)
        return out.to(x.dtype).unsqueeze(1)
