"""fp32 is IEEE fp32 in both runners (kgharness.zygote.startup.ieee_fp32): no TF32 in cuBLAS or
cuDNN, whatever torch defaults to. Through the real zygote, in the mode of the run (CPU
here, GPU on the device), so it is the runners' inherited state that is checked."""

import os

import pytest

from zygote_client import ZygoteClient

MODE = os.environ.get("KERNELGATE_TEST_MODE", "cpu_interpreter")

# What a runner's fp32 state looks like when it is IEEE: legacy flags and the per-operator
# API (torch >= 2.9) alike. Read here the way any code in a runner would.
IEEE = '''
def ieee():
    b = torch.backends
    new = [getattr(o, "fp32_precision", "none") for o in (b.cuda.matmul, b.cudnn.conv, b.cudnn.rnn)]
    return (not b.cuda.matmul.allow_tf32 and not b.cudnn.allow_tf32
            and torch.get_float32_matmul_precision() == "highest" and "tf32" not in new)
'''

# The reference doubles its output unless its runner is IEEE: a non-IEEE reference runner
# makes the honest candidate below incorrect.
TASK = '''"""x, or 2x where the runner is not IEEE fp32."""
import torch
import torch.nn as nn
''' + IEEE + '''

class Model(nn.Module):
    def forward(self, x):
        return x * (1.0 if ieee() else 2.0)


def get_inputs():
    return [torch.randn(64, 32)]


def get_init_inputs():
    return []
'''

# The candidate copies x with a Triton kernel, and refuses to run where its runner is not
# IEEE (a runtime_error).
CANDIDATE = '''
import torch
import torch.nn as nn
import triton
import triton.language as tl
''' + IEEE + '''

@triton.jit
def copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


class ModelNew(nn.Module):
    def forward(self, x):
        if not ieee():
            raise RuntimeError("the candidate's runner is not IEEE fp32")
        x = x.contiguous()
        out = torch.empty_like(x)
        copy_kernel[(triton.cdiv(x.numel(), 1024),)](x, out, x.numel(), BLOCK=1024)
        return out
'''


@pytest.fixture(scope="module")
def zygote():
    with ZygoteClient(mode=MODE) as z:
        yield z


def test_both_runners_run_ieee_fp32(zygote, tmp_path):
    task = tmp_path / "ieee_task.py"
    task.write_text(TASK)
    v = zygote.evaluate(str(task), CANDIDATE, {"seeds": 2})
    assert v["status"] == "correct", (v["status"], v["feedback"][:500])
    assert not v["hack_flags"], v["hack_flags"]


def test_the_check_reads_the_flags_it_sets():
    """The task's reading of the flags holds in a process set up like the zygote and fails
    in torch's default one (cuDNN allows TF32 there), so the test above can fail."""
    import torch
    from kgharness.zygote import startup
    scope = {"torch": torch}
    exec(IEEE, scope)
    b = torch.backends
    saved = (b.cuda.matmul.allow_tf32, b.cudnn.allow_tf32, torch.get_float32_matmul_precision())
    try:
        b.cudnn.allow_tf32 = True
        assert not scope["ieee"]()
        startup.ieee_fp32()
        assert scope["ieee"]()
    finally:
        b.cuda.matmul.allow_tf32, b.cudnn.allow_tf32 = saved[:2]
        torch.set_float32_matmul_precision(saved[2])


# Run in a fresh interpreter: it flips process-wide torch state on purpose.
RESTORE = r'''
import itertools, sys, torch
from kgharness import snapshot
from kgharness.zygote import startup
B = torch.backends
if sys.argv[1] == "ieee":
    startup.ieee_fp32()
moves = [lambda: setattr(B.cudnn.conv, "fp32_precision", "tf32"),
         lambda: setattr(B.cudnn.rnn, "fp32_precision", "tf32"),
         lambda: setattr(B.cuda.matmul, "fp32_precision", "tf32"),
         lambda: setattr(B, "fp32_precision", "tf32"),
         lambda: setattr(B.mkldnn, "fp32_precision", "bf16"),
         lambda: setattr(B.mkldnn.matmul, "fp32_precision", "tf32"),
         lambda: torch.set_float32_matmul_precision("medium"),
         lambda: setattr(B.cudnn, "allow_tf32", not B.cudnn.allow_tf32),
         lambda: setattr(B.cuda.matmul, "allow_tf32", True),
         lambda: setattr(B.cuda.matmul, "fp32_precision", "ieee"),
         lambda: setattr(B.cudnn.conv, "fp32_precision", "ieee")]
saved = snapshot.flags()
legacy = (B.cuda.matmul.allow_tf32, B.cudnn.allow_tf32, torch.get_float32_matmul_precision())
tried = missed = 0
for r in (1, 2, 3):
    for seq in itertools.permutations(range(len(moves)), r):
        for i in seq:
            try:
                moves[i]()
            except RuntimeError:
                pass
        if snapshot.flags() == saved:
            continue           # no net change (e.g. a flag set to what it was)
        tried += 1
        snapshot.restore_flags(saved)
        ok = snapshot.flags() == saved and \
            (B.cuda.matmul.allow_tf32, B.cudnn.allow_tf32, torch.get_float32_matmul_precision()) == legacy
        missed += not ok
print(tried, missed)
'''


@pytest.mark.parametrize("start", ["default", "ieee"])
def test_the_guards_restore_any_precision_change(start):
    """Whatever mix of legacy flags and per-operator precisions a candidate leaves, the
    snapshot sees the change and the restore gives back the snapshot, with the legacy views
    readable again (they raise on a mixed state)."""
    import subprocess
    import sys
    from pathlib import Path
    out = subprocess.run([sys.executable, "-c", RESTORE, start], capture_output=True, text=True, timeout=120,
                         cwd=Path(__file__).resolve().parents[1])
    assert out.returncode == 0, out.stderr[-2000:]
    tried, missed = map(int, out.stdout.split())
    assert tried > 500 and missed == 0, (tried, missed)
