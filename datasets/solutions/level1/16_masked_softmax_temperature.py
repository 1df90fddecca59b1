"""Honest solution: one program per score row (rows of 1024 fit in registers). The additive
mask is read through its broadcast strides (no expanded copy); the scores are divided by
the temperature and rounded to the input dtype exactly as the reference's separate ops do,
then the softmax runs in fp32."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def masked_softmax_kernel(s_ptr, m_ptr, out_ptr, temperature, H, SQ, SK,
                          smb, smh, smq, smk, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    q = row % SQ
    h = (row // SQ) % H
    b = row // (SQ * H)
    cols = tl.arange(0, BLOCK)
    ok = cols < SK
    x = tl.load(s_ptr + row * SK + cols, mask=ok, other=0.0).to(tl.float32)
    x = (x / temperature).to(s_ptr.dtype.element_ty).to(tl.float32)
    mk = tl.load(m_ptr + b * smb + h * smh + q * smq + cols * smk, mask=ok, other=0.0).to(tl.float32)
    z = tl.where(ok, x + mk, -float("inf"))
    e = tl.exp(z - tl.max(z, axis=0))
    y = e / tl.sum(e, axis=0)
    tl.store(out_ptr + row * SK + cols, y.to(out_ptr.dtype.element_ty), mask=ok)


class ModelNew(nn.Module):
    def __init__(self, temperature):
        super().__init__()
        self.temperature = temperature

    def forward(self, scores, mask):
        scores = scores.contiguous()
        Bt, H, SQ, SK = scores.shape
        mk = mask.expand(Bt, H, SQ, SK)  # a view with zero strides on broadcast dims
        out = torch.empty_like(scores)
        BLOCK = triton.next_power_of_2(SK)
        masked_softmax_kernel[(Bt * H * SQ,)](scores, mk, out, self.temperature, H, SQ, SK,
                                              mk.stride(0), mk.stride(1), mk.stride(2), mk.stride(3),
                                              BLOCK=BLOCK, num_warps=min(16, max(4, BLOCK // 256)))
        return out
