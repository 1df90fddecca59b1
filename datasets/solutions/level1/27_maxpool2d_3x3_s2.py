"""Honest solution: a flat grid over the output elements; each lane loads its window's
in-bounds taps (out-of-bounds taps count as -inf, as PyTorch's padding does) and keeps
the max. Window, stride and padding are constexprs, so the tap loops unroll.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def maxpool2d_kernel(x_ptr, out_ptr, total, H, W, OH, OW,
                     KS: tl.constexpr, STRIDE: tl.constexpr, PAD: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    valid = offs < total
    ow = offs % OW
    oh = (offs // OW) % OH
    plane = offs // (OW * OH)
    base = x_ptr + plane * H * W
    acc = tl.full((BLOCK,), float("-inf"), dtype=tl.float32)
    for kh in tl.static_range(KS):
        ih = oh * STRIDE - PAD + kh
        row_ok = valid & (ih >= 0) & (ih < H)
        for kw in tl.static_range(KS):
            iw = ow * STRIDE - PAD + kw
            ok = row_ok & (iw >= 0) & (iw < W)
            v = tl.load(base + ih * W + iw, mask=ok, other=float("-inf"))
            acc = tl.maximum(acc, v.to(tl.float32))
    tl.store(out_ptr + offs, acc.to(out_ptr.dtype.element_ty), mask=valid)


class ModelNew(nn.Module):
    def __init__(self, kernel_size, stride, padding):
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding

    def forward(self, x):
        x = x.contiguous()
        n, c, h, w = x.shape
        k, s, p = self.kernel_size, self.stride, self.padding
        oh = (h + 2 * p - k) // s + 1
        ow = (w + 2 * p - k) // s + 1
        out = torch.empty((n, c, oh, ow), device=x.device, dtype=x.dtype)
        total = out.numel()
        block = 1024
        maxpool2d_kernel[(triton.cdiv(total, block),)](x, out, total, h, w, oh, ow,
                                                        KS=k, STRIDE=s, PAD=p, BLOCK=block, num_warps=4)
        return out
