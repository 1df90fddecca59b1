"""Honest solution: per-channel scale and shift folded from the running statistics inside the
kernel, then one streaming pass y = x * scale + shift over each (sample, channel) plane."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def batchnorm_eval_kernel(x_ptr, mean_ptr, var_ptr, w_ptr, b_ptr, out_ptr, HW, eps,
                          C: tl.constexpr, BLOCK: tl.constexpr):
    plane = tl.program_id(0)
    c = plane % C
    scale = tl.load(w_ptr + c) / tl.sqrt(tl.load(var_ptr + c) + eps)
    shift = tl.load(b_ptr + c) - tl.load(mean_ptr + c) * scale
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    m = offs < HW
    base = plane.to(tl.int64) * HW
    x = tl.load(x_ptr + base + offs, mask=m, other=0.0).to(tl.float32)
    tl.store(out_ptr + base + offs, (x * scale + shift).to(out_ptr.dtype.element_ty), mask=m)


class ModelNew(nn.Module):
    def __init__(self, num_features, eps):
        super().__init__()
        self.bn = nn.BatchNorm2d(num_features, eps=eps)
        with torch.no_grad():
            self.bn.running_mean.copy_(0.5 * torch.randn(num_features))
            self.bn.running_var.copy_(0.5 + torch.rand(num_features))
            self.bn.weight.copy_(1.0 + 0.5 * torch.randn(num_features))
            self.bn.bias.copy_(0.5 * torch.randn(num_features))

    def forward(self, x):
        x = x.contiguous()
        B, C = x.shape[0], x.shape[1]
        HW = x[0, 0].numel()
        out = torch.empty_like(x)
        BLOCK = min(4096, triton.next_power_of_2(HW))
        bn = self.bn
        batchnorm_eval_kernel[(B * C, triton.cdiv(HW, BLOCK))](
            x, bn.running_mean, bn.running_var, bn.weight, bn.bias, out, HW, bn.eps,
            C=C, BLOCK=BLOCK, num_warps=8)
        return out
