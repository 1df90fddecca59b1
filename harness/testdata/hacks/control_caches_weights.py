"""control: an honest GEMM that caches a transposed copy of its weight, keyed by the
weight's address and version (a legitimate cache: weights do not change between calls,
and a write to them would change the version). It computes every output from its inputs,
so it must stay correct when new input values arrive in the same input tensors."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def linear_relu_kernel(x_ptr, wt_ptr, b_ptr, out_ptr, M, N, K: tl.constexpr,
                       sxm, sxk, swk, swn, som, son,
                       BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        kk = k0 + rk
        a = tl.load(x_ptr + rm[:, None] * sxm + kk[None, :] * sxk,
                    mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        b = tl.load(wt_ptr + kk[:, None] * swk + rn[None, :] * swn,
                    mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
    bias = tl.load(b_ptr + rn, mask=rn < N, other=0.0)
    acc = tl.maximum(acc + bias[None, :], 0.0)
    tl.store(out_ptr + rm[:, None] * som + rn[None, :] * son, acc,
             mask=(rm[:, None] < M) & (rn[None, :] < N))


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self._wt = None

    def weight_t(self):
        w = self.linear.weight
        key = (w.data_ptr(), w._version)
        if self._wt is None or self._wt[0] != key:
            self._wt = (key, w.detach().t().contiguous())
        return self._wt[1]

    def forward(self, x):
        wt, b = self.weight_t(), self.linear.bias
        M, K = x.shape
        N = wt.shape[1]
        out = torch.empty((M, N), device=x.device, dtype=x.dtype)
        BM, BN, BK = 32, 32, 32
        grid = (triton.cdiv(M, BM), triton.cdiv(N, BN))
        linear_relu_kernel[grid](x, wt, b, out, M, N, K,
                                 x.stride(0), x.stride(1), wt.stride(0), wt.stride(1),
                                 out.stride(0), out.stride(1), BM=BM, BN=BN, BK=BK)
        return out
