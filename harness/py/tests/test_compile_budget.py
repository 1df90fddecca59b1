"""The compile budget (compile_timeout_s): a candidate whose load and first call (import,
JIT compile, autotune) outrun it is compile_timeout, killed at the budget, not at the run's
timeout_s; time after its first call returned does not count; a task check has no budget;
on a CPU there is none unless the job sets one (the interpreter's first call is the run)."""
import json
import os
import subprocess
import sys
import time

import pytest

from zygote_client import ZygoteClient

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "eval_fixtures")
TASK = os.path.join(FIXTURES, "task_add_relu.py")
KERNEL = open(os.path.join(FIXTURES, "cand_add_relu.py")).read()

# A slow call stands in for a long compile when it is the first (the interpreter compiles
# nothing); a slow later call is the run's business.
SLOW_CALL = KERNEL + """
import time as _t
_f = ModelNew.forward
_n = [0]
def _slow(self, *a):
    _n[0] += 1
    if _n[0] == CALL:
        _t.sleep(SECONDS)
    return _f(self, *a)
ModelNew.forward = _slow
"""


def slow_call(call, seconds):
    return SLOW_CALL.replace("CALL", str(call)).replace("SECONDS", str(seconds))


@pytest.fixture(scope="module")
def z():
    with ZygoteClient(mode="cpu_interpreter") as c:
        yield c


def test_a_slow_first_call_is_compile_timeout_at_the_budget(z):
    t0 = time.monotonic()
    v = z.evaluate(TASK, slow_call(1, 30), {"timeout_s": 60, "compile_timeout_s": 2, "seeds": 1})
    took = time.monotonic() - t0
    assert v["status"] == "compile_timeout" and "compile budget" in v["feedback"], (v["status"], v["feedback"])
    assert not v["correct"] and v["speedup"] is None
    assert took < 20, took   # killed at the 2 s budget, not at timeout_s


def test_time_after_the_first_call_is_the_run_budgets(z):
    v = z.evaluate(TASK, slow_call(2, 4), {"timeout_s": 60, "compile_timeout_s": 2, "seeds": 2})
    assert v["status"] == "correct", (v["status"], v["feedback"])


def test_no_budget_on_a_cpu_unless_asked(z):
    v = z.evaluate(TASK, slow_call(1, 3), {"timeout_s": 60, "seeds": 1})
    assert v["status"] == "correct", (v["status"], v["feedback"])


def test_a_task_check_has_no_compile_budget(z):
    slow_task = {"name": "slow_add_relu", "path": "", "source": "import time\ntime.sleep(3)\n" + open(TASK).read()}
    z.send({"v": 1, "type": "eval", "id": "tc-slow", "job": {"task": slow_task, "code": "", "task_check": True,
                                                            "options": {"timeout_s": 60, "compile_timeout_s": 1}}})
    v = z.wait("tc-slow", 90)
    assert v["status"] == "correct", (v["status"], v["feedback"])   # a valid task, 3 s over the budget



def test_autotune_configs_are_capped_with_a_warning():
    """In a process of its own (the cap patches triton, as in the candidate's runner). The
    interpreter cannot benchmark configs (no active driver), so this checks the decorator;
    on a GPU the autotuner then tries only the kept configs."""
    prog = """
import json, triton, triton.language as tl
from kgharness.runner.models import cap_autotune
warnings = []
cap_autotune(warnings)
cap_autotune(warnings)   # a second call does not wrap twice
def kernel(x_ptr, BLOCK: tl.constexpr):
    pass
out = {}
for n in (40, 8):
    t = triton.autotune(configs=[triton.Config({"BLOCK": 16 * (i + 1)}) for i in range(n)], key=[])(triton.jit(kernel))
    out[n] = len(t.configs)
print(json.dumps({"kept": out, "warnings": warnings}))
"""
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(__file__))), TRITON_INTERPRET="1")
    p = subprocess.run([sys.executable, "-c", prog], capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout.strip().splitlines()[-1])
    assert r["kept"] == {"40": 16, "8": 8}, r
    assert r["warnings"] == ["@triton.autotune listed 40 configs; kernelgate kept the first 16 (each is a compile "
                             "inside the compile budget)"], r


AUTOTUNED = """
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK": 64 * (1 + i % 4)}, num_warps=1 + i % 2) for i in range(8)],
                 key=["n"])
@triton.jit
def add_relu_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.maximum(tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), 0.0),
             mask=mask)


class ModelNew(nn.Module):
    def forward(self, x, y):
        out = torch.empty_like(x)
        n = x.numel()
        add_relu_kernel[lambda m: (triton.cdiv(n, m["BLOCK"]),)](x, y, out, n)
        return out
"""


def test_an_autotuned_kernel_runs_in_the_interpreter(z):
    """It was a runtime_error ("0 active drivers"): the interpreter cannot benchmark configs."""
    v = z.evaluate(TASK, AUTOTUNED, {"timeout_s": 120, "seeds": 2})
    assert v["status"] == "correct", (v["status"], v["feedback"])
    assert any("8 configs; kernelgate kept the first 1 " in w for w in v["warnings"]), v["warnings"]
