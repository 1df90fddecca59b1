import torch
import torch.nn as nn


# task_add_relu at 16M elements: its kernel runs tens of microseconds, so the events that
# bracket a coverage measurement cost little beside it (at 8K elements the kernel lasts
# about as long as they do, and coverage measured 0.4955 on an H200).
class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, y):
        return torch.relu(x + y)


def get_inputs():
    return [torch.randn(4096, 4096), torch.randn(4096, 4096)]


def get_init_inputs():
    return []
