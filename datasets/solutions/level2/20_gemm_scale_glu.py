"""Honest solution: one fp16 tensor-core GEMM that computes the matching tiles of both GLU
halves (columns j and j + N share the x tile) and fuses bias, the per-column scale and
a * sigmoid(b) into the store, so the 2N-wide intermediate never reaches memory."""
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
def linear_scale_glu_kernel(x_ptr, w_ptr, b_ptr, s_ptr, out_ptr, M, N, K: tl.constexpr,
        stride_xm, stride_xk, stride_wn, stride_wk, stride_om, stride_on,
        BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
        GROUP_M: tl.constexpr, IEEE: tl.constexpr):
    """N is the GLU output width; W has 2N rows: rows [0, N) give a, rows [N, 2N) give b."""
    pid_m, pid_n = _tile_ids(M, N, BM, BN, GROUP_M)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    # Rows/columns past the edge are wrapped for the loads and masked at the store.
    x_ptrs = x_ptr + (rm % M)[:, None] * stride_xm + rk[None, :] * stride_xk
    wa_ptrs = w_ptr + (rn % N)[None, :] * stride_wn + rk[:, None] * stride_wk
    wb_ptrs = wa_ptrs + N * stride_wn
    acc_a = tl.zeros((BM, BN), dtype=tl.float32)
    acc_b = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        kmask = rk < K - k0
        a = tl.load(x_ptrs, mask=kmask[None, :], other=0.0)
        wa = tl.load(wa_ptrs, mask=kmask[:, None], other=0.0)
        wb = tl.load(wb_ptrs, mask=kmask[:, None], other=0.0)
        if IEEE:
            acc_a = tl.dot(a, wa, acc_a, input_precision="ieee")
            acc_b = tl.dot(a, wb, acc_b, input_precision="ieee")
        else:
            acc_a = tl.dot(a, wa, acc_a)
            acc_b = tl.dot(a, wb, acc_b)
        x_ptrs += BK * stride_xk
        wa_ptrs += BK * stride_wk
        wb_ptrs += BK * stride_wk
    nmask = rn < N
    ba = tl.load(b_ptr + rn, mask=nmask, other=0.0).to(tl.float32)
    bb = tl.load(b_ptr + N + rn, mask=nmask, other=0.0).to(tl.float32)
    sa = tl.load(s_ptr + rn, mask=nmask, other=0.0).to(tl.float32)
    sb = tl.load(s_ptr + N + rn, mask=nmask, other=0.0).to(tl.float32)
    ya = (acc_a + ba[None, :]) * sa[None, :]
    yb = (acc_b + bb[None, :]) * sb[None, :]
    y = ya * tl.sigmoid(yb)
    mask = (rm[:, None] < M) & nmask[None, :]
    tl.store(out_ptr + rm[:, None] * stride_om + rn[None, :] * stride_on,
             y.to(out_ptr.dtype.element_ty), mask=mask)


def _config(dtype):
    """Launch parameters for Hopper: two (BM, BN) accumulators make a 128x256 tile's worth of
    registers for 16-bit; FMA tiles for IEEE fp32 (no TF32)."""
    if dtype == torch.float32:
        return dict(BM=64, BN=128, BK=32, GROUP_M=8, IEEE=True, num_warps=4, num_stages=2)
    return dict(BM=128, BN=128, BK=64, GROUP_M=8, IEEE=False, num_warps=8, num_stages=3)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, 2 * out_features).to(torch.float16)
        self.scale = nn.Parameter((1.0 + 0.5 * torch.randn(2 * out_features)).to(torch.float16))

    def forward(self, x):
        w, b = self.linear.weight, self.linear.bias
        x = x.contiguous()
        M, K = x.shape
        N = w.shape[0] // 2
        out = torch.empty((M, N), device=x.device, dtype=x.dtype)
        cfg = _config(x.dtype)
        grid = (triton.cdiv(M, cfg["BM"]) * triton.cdiv(N, cfg["BN"]),)
        linear_scale_glu_kernel[grid](x, w, b, self.scale, out, M, N, K,
                x.stride(0), x.stride(1), w.stride(0), w.stride(1),
                out.stride(0), out.stride(1), **cfg)
        return out
