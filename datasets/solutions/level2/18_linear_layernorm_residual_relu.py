"""Honest solution: fp16 tensor-core GEMM + bias, then one row kernel that applies the
LayerNorm, adds the residual and the ReLU in the same pass (in place over the GEMM output,
which is rounded to fp16 first, as the reference does)."""
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
def linear_bias_kernel(x_ptr, w_ptr, b_ptr, out_ptr, M, N, K: tl.constexpr,
        stride_xm, stride_xk, stride_wn, stride_wk, stride_om, stride_on,
        BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
        GROUP_M: tl.constexpr, IEEE: tl.constexpr):
    pid_m, pid_n = _tile_ids(M, N, BM, BN, GROUP_M)
    y, rm, rn = _linear_tile(x_ptr, w_ptr, b_ptr, pid_m, pid_n, M, N, K, stride_xm, stride_xk,
                             stride_wn, stride_wk, BM, BN, BK, IEEE)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tl.store(out_ptr + rm[:, None] * stride_om + rn[None, :] * stride_on,
             y.to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def layernorm_residual_relu_kernel(y_ptr, r_ptr, g_ptr, b_ptr, N, stride_y, stride_r, eps,
                                   BLOCK: tl.constexpr):
    """In place: one program per row, the whole row in registers (N <= BLOCK)."""
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    y = tl.load(y_ptr + row * stride_y + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(y, axis=0) / N
    d = tl.where(mask, y - mean, 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(d * d, axis=0) / N + eps)
    g = tl.load(g_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    r = tl.load(r_ptr + row * stride_r + cols, mask=mask, other=0.0).to(tl.float32)
    out = tl.maximum(d * rstd * g + b + r, 0.0)
    tl.store(y_ptr + row * stride_y + cols, out.to(y_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        # Same parameters, created in the same order (and RNG draws) as the reference.
        self.linear = nn.Linear(in_features, out_features).to(torch.float16)
        self.norm = nn.LayerNorm(out_features, eps=1e-5)
        with torch.no_grad():
            self.norm.weight.copy_(1.0 + 0.5 * torch.randn(out_features))
            self.norm.bias.copy_(0.5 * torch.randn(out_features))
        self.norm = self.norm.to(torch.float16)

    def forward(self, x, residual):
        w, b = self.linear.weight, self.linear.bias
        x = x.contiguous()
        residual = residual.contiguous()
        M, K = x.shape
        N = w.shape[0]
        out = torch.empty((M, N), device=x.device, dtype=x.dtype)
        cfg = _config(x.dtype)
        grid = (triton.cdiv(M, cfg["BM"]) * triton.cdiv(N, cfg["BN"]),)
        linear_bias_kernel[grid](x, w, b, out, M, N, K,
                x.stride(0), x.stride(1), w.stride(0), w.stride(1),
                out.stride(0), out.stride(1), **cfg)
        BLOCK = triton.next_power_of_2(N)
        layernorm_residual_relu_kernel[(M,)](out, residual, self.norm.weight, self.norm.bias, N,
                                             out.stride(0), residual.stride(0), self.norm.eps,
                                             BLOCK=BLOCK, num_warps=8 if BLOCK >= 2048 else 4)
        return out
