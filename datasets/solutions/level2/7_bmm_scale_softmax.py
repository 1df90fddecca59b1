"""Honest solution: fused scores + softmax, never materialising unnormalised scores.

Each program owns BM query rows of one batch. Pass 1 streams the key tiles and keeps an
online row max and sum of exponentials; pass 2 recomputes each score tile on the tensor
cores and writes the normalised probabilities once. S and D are constexprs (one compile
per shape; a Python-int loop bound also runs in Triton's CPU interpreter).
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _scores(q, k_ptr, n0, S: tl.constexpr, D: tl.constexpr, stride_kn, stride_kd, scale,
            BN: tl.constexpr, BD: tl.constexpr):
    rn = n0 + tl.arange(0, BN)
    rd = tl.arange(0, BD)
    # (BD, BN) tile of k^T
    kt = tl.load(k_ptr + rn[None, :] * stride_kn + rd[:, None] * stride_kd,
                 mask=(rn[None, :] < S) & (rd[:, None] < D), other=0.0)
    s = tl.dot(q, kt) * scale
    return tl.where(rn[None, :] < S, s, -float("inf")), rn


@triton.jit
def scores_softmax_kernel(q_ptr, k_ptr, out_ptr, S: tl.constexpr, D: tl.constexpr,
                          stride_qb, stride_qm, stride_qd, stride_kb, stride_kn, stride_kd,
                          stride_ob, stride_om, stride_on, scale,
                          BM: tl.constexpr, BN: tl.constexpr, BD: tl.constexpr):
    pid_m = tl.program_id(0)
    batch = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rd = tl.arange(0, BD)
    q = tl.load(q_ptr + batch * stride_qb + rm[:, None] * stride_qm + rd[None, :] * stride_qd,
                mask=(rm[:, None] < S) & (rd[None, :] < D), other=0.0)
    k_ptr += batch * stride_kb
    row_max = tl.full((BM,), -float("inf"), dtype=tl.float32)
    row_sum = tl.zeros((BM,), dtype=tl.float32)
    for n0 in range(0, S, BN):
        s, rn = _scores(q, k_ptr, n0, S, D, stride_kn, stride_kd, scale, BN, BD)
        new_max = tl.maximum(row_max, tl.max(s, axis=1))
        row_sum = row_sum * tl.exp(row_max - new_max) + tl.sum(tl.exp(s - new_max[:, None]), axis=1)
        row_max = new_max
    inv = 1.0 / row_sum
    out_ptr += batch * stride_ob
    for n0 in range(0, S, BN):
        s, rn = _scores(q, k_ptr, n0, S, D, stride_kn, stride_kd, scale, BN, BD)
        p = tl.exp(s - row_max[:, None]) * inv[:, None]
        tl.store(out_ptr + rm[:, None] * stride_om + rn[None, :] * stride_on,
                 p.to(out_ptr.dtype.element_ty), mask=(rm[:, None] < S) & (rn[None, :] < S))


class ModelNew(nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, q, k):
        B, S, D = q.shape
        out = torch.empty((B, S, S), device=q.device, dtype=q.dtype)
        BM, BN = 128, 128
        BD = max(triton.next_power_of_2(D), 16)
        grid = (triton.cdiv(S, BM), B)
        scores_softmax_kernel[grid](q, k, out, S, D,
                                    q.stride(0), q.stride(1), q.stride(2),
                                    k.stride(0), k.stride(1), k.stride(2),
                                    out.stride(0), out.stride(1), out.stride(2), self.scale,
                                    BM=BM, BN=BN, BD=BD, num_warps=8, num_stages=3)
        return out
