"""escape: at import, SIGKILLs the process that forked it (the judge) and that one's
parent (the zygote), hoping a dead judge leaves the verdict to someone gullible; then
returns zeros. Landlock's signal scoping refuses both signals: the judge judges the zeros,
and the zygote keeps serving."""
import os
import signal

import torch
import torch.nn as nn

_tried = []
try:
    _judge = os.getppid()
    with open(f"/proc/{_judge}/stat") as _f:
        _zygote = int(_f.read().rsplit(")", 1)[1].split()[1])
    for _pid in (_judge, _zygote):
        try:
            os.kill(_pid, signal.SIGKILL)
            _tried.append((_pid, "killed"))
        except OSError as _e:
            _tried.append((_pid, type(_e).__name__))
except OSError:
    pass


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, y):
        return torch.zeros_like(x)
