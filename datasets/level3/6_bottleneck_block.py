"""bf16 ResNet bottleneck block (eval mode): 1x1 256->64, 3x3 64->64, 1x1 64->256, each with BN, ReLU, identity skip.

Batch 128 at 56 x 56. BatchNorm runs on randomised running statistics (eval mode set in
__init__) so it is not an identity.
"""
import torch
import torch.nn as nn

N, C, MID, H, W = 128, 256, 64, 56, 56
DTYPE = torch.bfloat16
TAGS = ["conv", "norm", "residual", "activation", "fused", "bf16"]


def _randomize_bn(bn):
    with torch.no_grad():
        c = bn.num_features
        bn.weight.copy_(1.0 + 0.1 * torch.randn(c))
        bn.bias.copy_(0.1 * torch.randn(c))
        bn.running_mean.copy_(0.1 * torch.randn(c))
        bn.running_var.copy_(0.5 + torch.rand(c))


class Model(nn.Module):
    def __init__(self, channels, mid_channels):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, mid_channels, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(mid_channels)
        self.conv2 = nn.Conv2d(mid_channels, mid_channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(mid_channels)
        self.conv3 = nn.Conv2d(mid_channels, channels, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(channels)
        for bn in (self.bn1, self.bn2, self.bn3):
            _randomize_bn(bn)
        self.to(DTYPE)
        self.eval()

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        y = torch.relu(self.bn2(self.conv2(y)))
        return torch.relu(self.bn3(self.conv3(y)) + x)


def get_inputs():
    return [torch.randn(N, C, H, W, dtype=DTYPE)]


def get_init_inputs():
    return [C, MID]


def get_held_out_inputs():
    return [[torch.randn(3, C, 29, 31, dtype=DTYPE)]]
