"""fp16 ResNet basic block (eval mode): conv3x3-BN-ReLU-conv3x3-BN, identity skip, ReLU; 64 x 128 x 56 x 56.

BatchNorm runs on its running statistics (the module is put in eval mode in __init__);
those statistics and the affine parameters are randomised so BN is not an identity.
"""
import torch
import torch.nn as nn

N, C, H, W = 64, 128, 56, 56
DTYPE = torch.float16
TAGS = ["conv", "norm", "residual", "activation", "fused", "compute-bound", "fp16"]


def _randomize_bn(bn):
    with torch.no_grad():
        c = bn.num_features
        bn.weight.copy_(1.0 + 0.1 * torch.randn(c))
        bn.bias.copy_(0.1 * torch.randn(c))
        bn.running_mean.copy_(0.1 * torch.randn(c))
        bn.running_var.copy_(0.5 + torch.rand(c))


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)
        _randomize_bn(self.bn1)
        _randomize_bn(self.bn2)
        self.to(DTYPE)
        self.eval()

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(self.bn2(self.conv2(y)) + x)


def get_inputs():
    return [torch.randn(N, C, H, W, dtype=DTYPE)]


def get_init_inputs():
    return [C]


def get_held_out_inputs():
    return [[torch.randn(3, C, 29, 31, dtype=DTYPE)]]
