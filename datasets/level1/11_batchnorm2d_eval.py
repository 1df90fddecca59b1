"""BatchNorm2d in inference mode (random running statistics and affine) over an fp32 NCHW activation."""
import torch
import torch.nn as nn
import torch.nn.functional as F

TAGS = ["norm", "elementwise", "memory-bound", "fp32"]

B, C, H, W = 64, 128, 112, 112
DTYPE = torch.float32


class Model(nn.Module):
    def __init__(self, num_features, eps):
        super().__init__()
        self.bn = nn.BatchNorm2d(num_features, eps=eps)
        with torch.no_grad():
            self.bn.running_mean.copy_(0.5 * torch.randn(num_features))
            self.bn.running_var.copy_(0.5 + torch.rand(num_features))
            self.bn.weight.copy_(1.0 + 0.5 * torch.randn(num_features))
            self.bn.bias.copy_(0.5 * torch.randn(num_features))

    def forward(self, x):
        # Inference semantics whatever the module's train/eval flag: running stats only.
        bn = self.bn
        return F.batch_norm(x, bn.running_mean, bn.running_var, bn.weight, bn.bias,
                            training=False, eps=bn.eps)


def get_inputs():
    return [torch.randn(B, C, H, W, dtype=DTYPE)]


def get_init_inputs():
    return [C, 1e-5]


def get_held_out_inputs():
    return [[torch.randn(5, C, 27, 31, dtype=DTYPE)]]
