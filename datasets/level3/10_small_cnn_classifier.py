"""fp16 small CNN classifier: [conv3x3-ReLU-maxpool2] x 2 (3->64->128 channels), flatten, Linear to 100 classes.

Batch 128 of 3 x 128 x 128 images; the flatten feeds 128 * 32 * 32 features to the
classifier, so the input height and width are fixed (held-out inputs vary the batch).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

N, C_IN, H, W, C1, C2, CLASSES = 128, 3, 128, 128, 64, 128, 100
DTYPE = torch.float16
TAGS = ["conv", "pooling", "matmul", "activation", "fp16"]


class Model(nn.Module):
    def __init__(self, in_channels, c1, c2, height, width, num_classes):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, c1, 3, padding=1)
        self.conv2 = nn.Conv2d(c1, c2, 3, padding=1)
        self.fc = nn.Linear(c2 * (height // 4) * (width // 4), num_classes)
        self.to(DTYPE)

    def forward(self, x):
        x = F.max_pool2d(torch.relu(self.conv1(x)), 2)
        x = F.max_pool2d(torch.relu(self.conv2(x)), 2)
        return self.fc(x.flatten(1))


def get_inputs():
    return [torch.randn(N, C_IN, H, W, dtype=DTYPE)]


def get_init_inputs():
    return [C_IN, C1, C2, H, W, CLASSES]


def get_held_out_inputs():
    return [[torch.randn(3, C_IN, H, W, dtype=DTYPE)]]
