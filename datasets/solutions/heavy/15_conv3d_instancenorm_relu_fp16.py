"""Honest (partial-coverage) solution: cuDNN does the convolution (with its bias); one Triton
program per (sample, channel) then normalises its 2^20 voxels: pass 1 accumulates shifted
sums and sums of squares in fp32 (the shift, the volume's first value, keeps the variance
free of cancellation), pass 2 applies the affine and ReLU and rounds to fp16 once. The
volume size is a constexpr (one compile per size; a Python-int loop bound also runs in
the CPU interpreter)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def instancenorm_relu_kernel(y_ptr, w_ptr, b_ptr, out_ptr, eps, C, S: tl.constexpr, BLOCK: tl.constexpr):
    plane = tl.program_id(0)
    c = plane % C
    base = plane.to(tl.int64) * S
    offs = tl.arange(0, BLOCK)
    k = tl.load(y_ptr + base).to(tl.float32)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    acc2 = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, S, BLOCK):
        idx = start + offs
        m = idx < S
        d = tl.where(m, tl.load(y_ptr + base + idx, mask=m, other=0.0).to(tl.float32) - k, 0.0)
        acc += d
        acc2 += d * d
    sh = tl.sum(acc, axis=0) / S
    var = tl.maximum(tl.sum(acc2, axis=0) / S - sh * sh, 0.0)
    mean = k + sh
    scale = tl.load(w_ptr + c).to(tl.float32) / tl.sqrt(var + eps)
    shift = tl.load(b_ptr + c).to(tl.float32) - mean * scale
    for start in range(0, S, BLOCK):
        idx = start + offs
        m = idx < S
        v = tl.load(y_ptr + base + idx, mask=m, other=0.0).to(tl.float32)
        tl.store(out_ptr + base + idx, tl.maximum(v * scale + shift, 0.0).to(out_ptr.dtype.element_ty), mask=m)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, eps):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size,
                              padding=kernel_size // 2).to(torch.float16)
        self.norm = nn.InstanceNorm3d(out_channels, eps=eps, affine=True)
        with torch.no_grad():
            self.norm.weight.copy_(1.0 + 0.5 * torch.randn(out_channels))
            self.norm.bias.copy_(0.5 * torch.randn(out_channels))
        self.norm.to(torch.float16)

    def forward(self, x):
        y = self.conv(x).contiguous()
        B, C = y.shape[0], y.shape[1]
        S = y[0, 0].numel()
        out = torch.empty_like(y)
        BLOCK = min(4096, triton.next_power_of_2(S))
        instancenorm_relu_kernel[(B * C,)](y, self.norm.weight, self.norm.bias, out, self.norm.eps, C,
                                           S=S, BLOCK=BLOCK, num_warps=8)
        return out
