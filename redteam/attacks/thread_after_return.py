# class: thread_after_return
# catalogue: thread
# description: returns an empty buffer at once and lets a background thread fill it with the honest result 50 ms later
import threading
import time

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()
        self.inner = RT_Honest(*args, **kwargs)
        self.like = None

    def forward(self, *args):
        if self.like is None:
            out = self.inner(*args)
            self.like = (out.shape, out.dtype, out.device)
            return out
        shape, dtype, device = self.like
        out = torch.empty(shape, dtype=dtype, device=device)

        def finish():
            time.sleep(0.05)
            with torch.no_grad():
                out.copy_(self.inner(*args))
        threading.Thread(target=finish, daemon=True).start()
        return out
