"""fp16 depthwise-separable conv block (MobileNet-style, eval mode): depthwise 3x3-BN-ReLU, pointwise 1x1 128->256-BN-ReLU.

Batch 64 at 112 x 112. BatchNorm runs on randomised running statistics (eval mode set in
__init__) so it is not an identity.
"""
import torch
import torch.nn as nn

N, C_IN, C_OUT, H, W = 64, 128, 256, 112, 112
DTYPE = torch.float16
TAGS = ["conv", "norm", "activation", "fused", "memory-bound", "fp16"]


def _randomize_bn(bn):
    with torch.no_grad():
        c = bn.num_features
        bn.weight.copy_(1.0 + 0.1 * torch.randn(c))
        bn.bias.copy_(0.1 * torch.randn(c))
        bn.running_mean.copy_(0.1 * torch.randn(c))
        bn.running_var.copy_(0.5 + torch.rand(c))


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.dw = nn.Conv2d(in_channels, in_channels, 3, padding=1, groups=in_channels, bias=False)
        self.bn1 = nn.BatchNorm2d(in_channels)
        self.pw = nn.Conv2d(in_channels, out_channels, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(out_channels)
        _randomize_bn(self.bn1)
        _randomize_bn(self.bn2)
        self.to(DTYPE)
        self.eval()

    def forward(self, x):
        y = torch.relu(self.bn1(self.dw(x)))
        return torch.relu(self.bn2(self.pw(y)))


def get_inputs():
    return [torch.randn(N, C_IN, H, W, dtype=DTYPE)]


def get_init_inputs():
    return [C_IN, C_OUT]


def get_held_out_inputs():
    return [[torch.randn(3, C_IN, 29, 31, dtype=DTYPE)]]
