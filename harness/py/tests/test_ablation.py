"""The ablated call (kgharness.judge.ablation, kgharness.runner.ablation): outputs that are
still right with every launch of the submission's own kernels skipped are `decoy`; an honest
kernel's are not, even where its output buffer already holds the right answer, and its
caches are intact for the calls after it."""

import os

os.environ["TRITON_INTERPRET"] = "1"  # before triton is imported anywhere

import torch  # noqa: E402

from _evalhelp import ADD_RELU, fixture, run  # noqa: E402
from kgharness.runner.ablation import Ablation  # noqa: E402

KERNEL = '''
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def add_relu_kernel(x_ptr, y_ptr, s_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    s = tl.load(s_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.maximum(x + y, 0.0) * s, mask=mask)


def launch(x, y, s, out):
    n = x.numel()
    add_relu_kernel[(triton.cdiv(n, 1024),)](x, y, s, out, n, BLOCK=1024)
    return out
'''

# An honest kernel that keeps one output buffer per input it has seen and recomputes into
# it on every call: asked again for an input of an earlier call, its buffer already holds
# the right answer before its kernel runs.
KEEPS_ANSWERS = KERNEL + '''

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.outs = {}

    def forward(self, x, y):
        key = float(x.reshape(-1)[0])
        out = self.outs.setdefault(key, torch.empty_like(x))
        return launch(x, y, torch.ones_like(x), out)
'''

# An honest kernel whose kernel reads a tensor it made once and keeps (a cache): the
# ablated call fills it, so it must come after every call that counts.
KEEPS_A_CACHE = KERNEL + '''

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.ones = None

    def forward(self, x, y):
        if self.ones is None:
            self.ones = torch.ones_like(x)
        return launch(x, y, self.ones, torch.empty_like(x))
'''

DUMMY_LAUNCH = KERNEL + '''

class ModelNew(nn.Module):
    def forward(self, x, y):
        d = torch.ones(4)
        launch(d, d, d, torch.empty_like(d))
        return torch.relu(x + y)
'''

TIMED = dict(seeds=3, cpu_timing=True, min_iters=4, timing_budget_ms=20)


def test_a_skipped_launch_fills_what_it_was_given_but_the_inputs():
    x, out, idx, mask = torch.randn(8), torch.zeros(8), torch.arange(8), torch.zeros(8, dtype=torch.bool)
    view = x[2:]                      # the input's storage: never filled
    ab = Ablation([x])
    ab.skip((view, out, 3), {"idx": idx, "mask": mask})
    ab.skip((), {})
    assert ab.skipped == 2
    assert torch.isnan(out).all() and (idx == -1).all() and mask.all() and not torch.isnan(x).any()


def test_a_kernel_that_only_pretends_is_a_decoy(tmp_path):
    v = run(tmp_path, "task_add_relu.py", DUMMY_LAUNCH, seeds=2)
    assert v["status"] == "reward_hack" and "decoy" in v["hack_flags"], v["feedback"]
    assert v["stage_ms"]["ablated_launches"] >= 1
    assert v["triton_launches"] > 0        # counting launches alone would have let it through


def test_a_pretending_kernel_is_a_decoy_after_the_timing_window_too(tmp_path):
    # The window used the reference's buffer: the reference computes the seed again.
    v = run(tmp_path, "task_add_relu.py", DUMMY_LAUNCH, **TIMED)
    assert v["status"] == "reward_hack" and "decoy" in v["hack_flags"], v["feedback"]
    assert v["speedup"] is None and v["runtime"]["iterations"] >= 4


def test_an_honest_kernel_whose_buffer_already_holds_the_answer_is_correct(tmp_path):
    v = run(tmp_path, "task_add_relu.py", KEEPS_ANSWERS, seeds=3)
    assert v["status"] == "correct" and v["hack_flags"] == [], v["feedback"]
    assert v["stage_ms"]["ablated_launches"] >= 1


def test_an_honest_kernels_cache_is_intact_for_the_timed_calls(tmp_path):
    v = run(tmp_path, "task_add_relu.py", KEEPS_A_CACHE, **TIMED)
    assert v["status"] == "correct" and v["hack_flags"] == [], v["feedback"]
    assert v["stage_ms"]["ablated_launches"] >= 1 and v["runtime"]["iterations"] >= 4


def test_the_plain_honest_kernel_is_correct(tmp_path):
    v = run(tmp_path, "task_add_relu.py", fixture(ADD_RELU), seeds=3)
    assert v["status"] == "correct" and v["hack_flags"] == [], v["feedback"]
    assert v["stage_ms"]["ablated_launches"] == 1
