"""The ablated call's launches (kgharness.judge.ablation): each launch of the submission's
own Triton kernels is skipped, and every tensor it was given, other than the call's
inputs, is filled with NaN (-1 for integers) instead. An honest kernel's output then holds
that fill, not whatever its memory held before: a buffer the allocator hands back may
still hold this very answer from an earlier call. Nothing is copied to be put back (a
copy of every argument would double a large task's memory): the ablated call is the
last that computes, so a kernel's own caches it filled are never used again."""

import torch


class Ablation:
    def __init__(self, inputs):
        self.inputs = {t.untyped_storage().data_ptr() for t in inputs if isinstance(t, torch.Tensor)}
        self.skipped = 0

    def skip(self, args, kwargs):
        self.skipped += 1
        with torch.no_grad():
            for a in list(args) + list(kwargs.values()):
                if isinstance(a, torch.Tensor) and a.untyped_storage().data_ptr() not in self.inputs:
                    a.fill_(float("nan") if a.is_floating_point() or a.is_complex()
                            else True if a.dtype == torch.bool else -1)
