"""Honest (partial-coverage) solution: cuDNN does the transposed convolution (with its
bias); one Triton kernel reduces each pixel's channels with an online logsumexp in fp32,
reading the activation once and writing only the (N, H, W) map. Programs cover a block of
pixels of one sample and walk the channels in chunks; C is a constexpr (one compile per
channel count; a Python-int loop bound also runs in the CPU interpreter)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def channel_logsumexp_kernel(y_ptr, out_ptr, HW, C: tl.constexpr, CB: tl.constexpr, PB: tl.constexpr):
    n = tl.program_id(0)
    p = tl.program_id(1) * PB + tl.arange(0, PB)
    pmask = p < HW
    cs = tl.arange(0, CB)
    base = y_ptr + n.to(tl.int64) * C * HW
    m = tl.full((PB,), -1e30, tl.float32)  # finite: exp(m - m_new) stays defined
    s = tl.zeros((PB,), dtype=tl.float32)
    for c0 in range(0, C, CB):
        c = c0 + cs
        mask = (c[:, None] < C) & pmask[None, :]
        v = tl.load(base + c.to(tl.int64)[:, None] * HW + p[None, :], mask=mask,
                    other=-float("inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(v, axis=0))
        s = s * tl.exp(m - m_new) + tl.sum(tl.exp(v - m_new[None, :]), axis=0)
        m = m_new
    lse = m + tl.log(s)
    tl.store(out_ptr + n.to(tl.int64) * HW + p, lse.to(out_ptr.dtype.element_ty), mask=pmask)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding):
        super().__init__()
        self.conv_t = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=stride,
                                         padding=padding).to(torch.bfloat16)

    def forward(self, x):
        y = self.conv_t(x).contiguous()
        B, C, H, W = y.shape
        out = torch.empty((B, H, W), device=y.device, dtype=y.dtype)
        PB, CB = 128, 32
        channel_logsumexp_kernel[(B, triton.cdiv(H * W, PB))](y, out, H * W, C=C, CB=CB, PB=PB,
                                                              num_warps=4)
        return out
