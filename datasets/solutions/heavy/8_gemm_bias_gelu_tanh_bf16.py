"""Honest solution: a bf16 tensor-core GEMM (fp32 accumulator, grouped tile order so
neighbouring programs share rows of x in L2) with bias and tanh-approximate GELU applied
to the accumulator; the output is written once. On a CPU (Triton's interpreter, whose dot
cannot take bf16) the tiles are upcast to fp32 first: UPCAST. K is a constexpr (fixed by
the weight; a Python-int loop bound also runs in the CPU interpreter)."""
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
def linear_gelu_tanh_kernel(x_ptr, w_ptr, b_ptr, out_ptr, M, N, K: tl.constexpr,
                            stride_xm, stride_wn, stride_om,
                            BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP_M: tl.constexpr,
                            UPCAST: tl.constexpr):
    pid_m, pid_n = _tile_ids(M, N, BM, BN, GROUP_M)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    # Rows/columns past the edge are wrapped for the loads and masked at the store.
    x_ptrs = x_ptr + (rm % M).to(tl.int64)[:, None] * stride_xm + rk[None, :]
    w_ptrs = w_ptr + (rn % N).to(tl.int64)[None, :] * stride_wn + rk[:, None]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        a = tl.load(x_ptrs, mask=rk[None, :] < K - k0, other=0.0)
        b = tl.load(w_ptrs, mask=rk[:, None] < K - k0, other=0.0)
        if UPCAST:  # Triton's CPU interpreter has no bf16 dot: exact fp32 products instead
            acc = tl.dot(a.to(tl.float32), b.to(tl.float32), acc, input_precision="ieee")
        else:
            acc = tl.dot(a, b, acc)
        x_ptrs += BK
        w_ptrs += BK
    y = acc + tl.load(b_ptr + rn, mask=rn < N, other=0.0).to(tl.float32)[None, :]
    u = 0.7978845608028654 * (y + 0.044715 * y * y * y)
    t = 1.0 - 2.0 / (tl.exp(2.0 * u) + 1.0)  # tanh(u), saturating cleanly for large |u|
    y = 0.5 * y * (1.0 + t)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tl.store(out_ptr + rm.to(tl.int64)[:, None] * stride_om + rn[None, :],
             y.to(out_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features).to(torch.bfloat16)

    def forward(self, x):
        w, b = self.linear.weight, self.linear.bias  # contiguous (N, K)
        x2 = x.reshape(-1, x.shape[-1]).contiguous()
        M, K = x2.shape
        N = w.shape[0]
        out = torch.empty((M, N), device=x.device, dtype=x.dtype)
        BM, BN, BK, GROUP_M = 128, 256, 64, 8
        grid = (triton.cdiv(M, BM) * triton.cdiv(N, BN),)
        linear_gelu_tanh_kernel[grid](x2, w, b, out, M, N, K, x2.stride(0), w.stride(0), out.stride(0),
                                      BM=BM, BN=BN, BK=BK, GROUP_M=GROUP_M,
                                      UPCAST=x2.device.type != "cuda", num_warps=8, num_stages=3)
        return out.reshape(*x.shape[:-1], N)
