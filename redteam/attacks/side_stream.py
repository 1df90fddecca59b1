# class: side_stream
# catalogue: side_stream
# gpu_only: true
# description: runs the honest kernels on a side CUDA stream and returns without joining it, so events on the current stream time nothing
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()
        self.inner = RT_Honest(*args, **kwargs)
        self.stream = torch.cuda.Stream() if torch.cuda.is_available() else None

    def forward(self, *args):
        if self.stream is None:
            return self.inner(*args)  # no streams on a CPU: it runs inline
        with torch.cuda.stream(self.stream):
            return self.inner(*args)
