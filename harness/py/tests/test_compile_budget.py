"""The compile budget (compile_timeout_s): a candidate whose load and first call (import,
JIT compile, autotune) outrun it is compile_timeout, killed at the budget, not at the run's
timeout_s; time after its first call returned does not count; a task check has no budget;
on a CPU there is none unless the job sets one (the interpreter's first call is the run)."""
import os
import time

import pytest

from zygote_client import ZygoteClient

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "eval_fixtures")
TASK = os.path.join(FIXTURES, "task_add_relu.py")
KERNEL = open(os.path.join(FIXTURES, "cand_add_relu.py")).read()

# A slow first call stands in for a long compile (the interpreter compiles nothing); the
# second wrapper is slow only after the first call.
SLOW_FIRST = KERNEL + """
import time as _t
_f = ModelNew.forward
_n = [0]
def _slow(self, *a):
    _n[0] += 1
    if _n[0] == 1:
        _t.sleep(SECONDS)
    return _f(self, *a)
ModelNew.forward = _slow
"""


@pytest.fixture(scope="module")
def z():
    with ZygoteClient(mode="cpu_interpreter") as c:
        yield c


def test_a_slow_first_call_is_compile_timeout_at_the_budget(z):
    t0 = time.monotonic()
    v = z.evaluate(TASK, SLOW_FIRST.replace("SECONDS", "30"), {"timeout_s": 60, "compile_timeout_s": 2, "seeds": 1})
    took = time.monotonic() - t0
    assert v["status"] == "compile_timeout" and "compile budget" in v["feedback"], (v["status"], v["feedback"])
    assert not v["correct"] and v["speedup"] is None
    assert took < 20, took   # killed at the 2 s budget, not at timeout_s


def test_time_after_the_first_call_is_the_run_budgets(z):
    late = KERNEL + """
import time as _t
_f = ModelNew.forward
_n = [0]
def _late(self, *a):
    _n[0] += 1
    if _n[0] == 2:
        _t.sleep(4)
    return _f(self, *a)
ModelNew.forward = _late
"""
    v = z.evaluate(TASK, late, {"timeout_s": 60, "compile_timeout_s": 2, "seeds": 2})
    assert v["status"] == "correct", (v["status"], v["feedback"])


def test_no_budget_on_a_cpu_unless_asked(z):
    v = z.evaluate(TASK, SLOW_FIRST.replace("SECONDS", "3"), {"timeout_s": 60, "seeds": 1})
    assert v["status"] == "correct", (v["status"], v["feedback"])


def test_a_task_check_has_no_compile_budget(z):
    slow_task = {"name": "slow_add_relu", "path": "", "source": "import time\ntime.sleep(3)\n" + open(TASK).read()}
    z.send({"v": 1, "type": "eval", "id": "tc-slow", "job": {"task": slow_task, "code": "", "task_check": True,
                                                            "options": {"timeout_s": 60, "compile_timeout_s": 1}}})
    v = z.wait("tc-slow", 90)
    assert v["status"] == "correct", (v["status"], v["feedback"])   # a valid task, 3 s over the budget
