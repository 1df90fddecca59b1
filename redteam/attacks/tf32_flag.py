# class: tf32_flag
# catalogue: precision
# description: switches TF32 (and reduced-precision reductions) on globally at import, then computes honestly
import torch
import torch.nn as nn

torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True
torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = True
torch.set_float32_matmul_precision("medium")


class ModelNew(nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()
        self.inner = RT_Honest(*args, **kwargs)

    def forward(self, *args):
        return self.inner(*args)
