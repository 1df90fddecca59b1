"""Honest solution: a bf16 tensor-core GEMM over the long K (fp32 accumulator) whose
epilogue multiplies by the fp32 row and column scales and rounds to bf16 once. On a CPU
(Triton's interpreter, whose dot cannot take bf16) the tiles are upcast to fp32 first:
UPCAST. K is a constexpr (one compile per K; a Python-int loop bound also runs in the
CPU interpreter)."""
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
def matmul_dequant_kernel(a_ptr, b_ptr, rs_ptr, cs_ptr, out_ptr, M, N, K: tl.constexpr,
                          stride_am, stride_bk, stride_om,
                          BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP_M: tl.constexpr,
                          UPCAST: tl.constexpr):
    pid_m, pid_n = _tile_ids(M, N, BM, BN, GROUP_M)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + (rm % M).to(tl.int64)[:, None] * stride_am + rk[None, :]
    b_ptrs = b_ptr + rk.to(tl.int64)[:, None] * stride_bk + (rn % N)[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        a = tl.load(a_ptrs, mask=rk[None, :] < K - k0, other=0.0)
        b = tl.load(b_ptrs, mask=rk[:, None] < K - k0, other=0.0)
        if UPCAST:  # Triton's CPU interpreter has no bf16 dot: exact fp32 products instead
            acc = tl.dot(a.to(tl.float32), b.to(tl.float32), acc, input_precision="ieee")
        else:
            acc = tl.dot(a, b, acc)
        a_ptrs += BK
        b_ptrs += BK * stride_bk
    rs = tl.load(rs_ptr + rm, mask=rm < M, other=0.0)
    cs = tl.load(cs_ptr + rn, mask=rn < N, other=0.0)
    y = acc * rs[:, None] * cs[None, :]
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tl.store(out_ptr + rm.to(tl.int64)[:, None] * stride_om + rn[None, :],
             y.to(out_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b, row_scale, col_scale):
        a, b = a.contiguous(), b.contiguous()
        rs, cs = row_scale.float().contiguous(), col_scale.float().contiguous()
        M, K = a.shape
        N = b.shape[1]
        out = torch.empty((M, N), device=a.device, dtype=a.dtype)
        BM, BN, BK, GROUP_M = 128, 256, 64, 8
        grid = (triton.cdiv(M, BM) * triton.cdiv(N, BN),)
        matmul_dequant_kernel[grid](a, b, rs, cs, out, M, N, K, a.stride(0), b.stride(0), out.stride(0),
                                    BM=BM, BN=BN, BK=BK, GROUP_M=GROUP_M,
                                    UPCAST=a.device.type != "cuda", num_warps=8, num_stages=3)
        return out
