"""fp16 LSTM cell, one time step (nn.LSTMCell): input 1024, hidden 2048, batch 4096; returns (h', c')."""
import torch
import torch.nn as nn

BATCH, D_IN, D_HID = 4096, 1024, 2048
DTYPE = torch.float16
TAGS = ["rnn", "matmul", "gemm", "activation", "fused", "fp16"]


class Model(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.cell = nn.LSTMCell(input_size, hidden_size)
        self.to(DTYPE)

    def forward(self, x, h, c):
        return self.cell(x, (h, c))


def _inputs(b):
    return [torch.randn(b, D_IN, dtype=DTYPE), torch.tanh(torch.randn(b, D_HID)).to(DTYPE),
            torch.randn(b, D_HID, dtype=DTYPE)]


def get_inputs():
    return _inputs(BATCH)


def get_init_inputs():
    return [D_IN, D_HID]


def get_held_out_inputs():
    return [_inputs(1000), _inputs(3)]
