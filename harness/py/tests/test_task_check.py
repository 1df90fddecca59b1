"""Task checks (protocol 1.1, job.task_check): the reference stage alone says whether a task is valid."""

import os

os.environ["TRITON_INTERPRET"] = "1"  # before triton is imported anywhere

import pytest  # noqa: E402
from _evalhelp import judge_in_fork, task  # noqa: E402

from kgharness.verdict import name_task_failure, new_verdict  # noqa: E402

GOOD = task("task_add_relu.py")


def check(tmp_path, t, code="", depth=None, max_mb=None, **options):
    job = {"task": t, "code": code, "options": dict({"seeds": 3}, **options), "task_check": True}
    if depth or max_mb:
        job["check"] = {"depth": depth, "max_mb": max_mb}
    return judge_in_fork(job, str(tmp_path))


def edited(find, replace):
    assert find in GOOD["source"], find
    return dict(GOOD, source=GOOD["source"].replace(find, replace, 1))


def test_valid_task_is_correct_without_a_candidate(tmp_path):
    v = check(tmp_path, GOOD)
    assert v["status"] == "correct" and v["correct"], v["feedback"]
    assert not v["compiled"] and v["trials_total"] == 0 and v["task_error"] == ""
    assert "task check passed" in v["feedback"] and "3 seeds" in v["feedback"]
    assert "reference" in v["stage_ms"] and "correctness" not in v["stage_ms"]
    assert v["tolerance"]["dtype"] == "float32"


def test_code_is_ignored(tmp_path):
    v = check(tmp_path, GOOD, code="this is not python at all (")
    assert v["status"] == "correct", v["feedback"]


def test_held_out_sets_are_run(tmp_path):
    t = dict(GOOD, source=GOOD["source"] + "\n\ndef get_held_out_inputs():\n"
             "    return [[torch.randn(7, 3), torch.randn(7, 3)]]\n")
    v = check(tmp_path, t)
    assert v["status"] == "correct" and "1 held-out" in v["feedback"], v["feedback"]
    broken = dict(GOOD, source=GOOD["source"] + "\n\ndef get_held_out_inputs():\n"
                  "    return [[torch.randn(7, 3), torch.randn(8, 3)]]\n")
    v = check(tmp_path, broken)
    assert v["status"] == "harness_error" and "reference raised" in v["task_error"], v


COUNTER = '''
_calls = [0]


def get_inputs():
    _calls[0] += 1
    return [torch.randn(64, 128) + _calls[0], torch.randn(64, 128)]
'''


@pytest.mark.parametrize("name,find,replace,reason", [
    ("syntax error", "def forward(self, x, y):", "def forward(self, x, y)", "syntax error at line"),
    # no line to name: said without one
    ("null byte", "import torch.nn as nn", "import torch.nn as nn\x00",
     "syntax error: source code string cannot contain null bytes"),
    ("import raises", "import torch.nn as nn", "import torch.nn as nn\nraise ImportError('no cuda here')",
     "importing the task raised ImportError: no cuda here"),
    ("forward raises", "return torch.relu(x + y)", "raise RuntimeError('boom')", "reference raised RuntimeError: boom"),
    ("constant output", "return torch.relu(x + y)", "return torch.zeros_like(x)", "degenerate reference"),
    # the zero-output loophole's cousin: a mean over many values is ~0 for every seed
    ("seed-independent output", "return torch.relu(x + y)", "return (x + y).mean() * 1e-3",
     "do not depend on the input seed"),
    ("nan output", "return torch.relu(x + y)", "return x * float('nan')", "NaN/Inf"),
    ("no Model", "class Model(", "class Other(", "does not define Model"),
    ("nondeterministic inputs", "def get_inputs():\n    return [torch.randn(64, 128), torch.randn(64, 128)]\n",
     COUNTER, "not deterministic"),
])
def test_invalid_tasks_name_the_reason(tmp_path, name, find, replace, reason):
    v = check(tmp_path, edited(find, replace))
    assert v["status"] == "harness_error", (name, v["status"], v["feedback"])
    assert reason in v["task_error"], (name, v["task_error"])
    assert not v["correct"]


def test_failure_without_task_error_gets_one():
    v = new_verdict()
    v["status"], v["feedback"] = "timeout", "the evaluation timed out during stage reference\nmore"
    name_task_failure(v)
    assert v["task_error"] == ("the reference failed the task check (timeout): "
                               "the evaluation timed out during stage reference")
    ok = new_verdict()
    ok["status"] = "correct"
    name_task_failure(ok)
    assert ok["task_error"] == ""


BIG = """\"\"\"A GEMM sized for a GPU: 8192^3.\"\"\"
import torch
import torch.nn as nn

TAGS = ["matmul", "fp32"]


class Model(nn.Module):
    def forward(self, a, b):
        return a @ b


def get_inputs():
    return [torch.randn(8192, 8192), torch.randn(8192, 8192)]


def get_init_inputs():
    return []
"""


def test_meta_pass_describes_the_task(tmp_path):
    v = check(tmp_path, dict(GOOD, source=BIG), depth="shapes")
    assert v["status"] == "correct", v["feedback"]
    info = v["task_info"]
    assert info["depth"] == "shapes" and "shape level only" in v["feedback"]
    assert info["name"] == "A GEMM sized for a GPU: 8192^3." and info["tags"] == ["matmul", "fp32"]
    assert info["outputs"] == [{"shape": [8192, 8192], "dtype": "float32"}]
    assert info["flops"] == 2 * 8192 ** 3
    assert info["input_bytes"] == 2 * 8192 * 8192 * 4 and info["output_bytes"] == 8192 * 8192 * 4
    assert "reference" not in v["stage_ms"]  # nothing was computed


def test_auto_depth_runs_what_the_cpu_can_afford(tmp_path):
    big = check(tmp_path, dict(GOOD, source=BIG), depth="auto")
    assert big["status"] == "correct" and big["task_info"]["depth"] == "shapes", big["feedback"]
    small = check(tmp_path, GOOD, depth="auto")
    assert small["status"] == "correct" and small["task_info"]["depth"] == "full", small["feedback"]
    assert "reference" in small["stage_ms"]


def test_task_too_big_for_memory_is_rejected(tmp_path):
    v = check(tmp_path, dict(GOOD, source=BIG), depth="shapes", max_mb=512)
    assert v["status"] == "harness_error"
    assert "needs 768 MiB" in v["task_error"] and "at most 512 MiB" in v["task_error"], v["task_error"]


def test_data_dependent_task_cannot_be_shape_checked(tmp_path):
    src = GOOD["source"].replace("return torch.relu(x + y)", "return torch.relu(x + y) * float((x > 0).sum().item() > 0)")
    v = check(tmp_path, dict(GOOD, source=src), depth="shapes")
    assert v["status"] == "harness_error" and "meta device" in v["task_error"], v["task_error"]
    full = check(tmp_path, dict(GOOD, source=src), depth="full")
    assert full["status"] == "correct" and full["task_info"]["meta_error"], full["feedback"]


def test_unknown_depth_is_an_error(tmp_path):
    v = check(tmp_path, GOOD, depth="deep")
    assert v["status"] == "harness_error" and "unknown check depth" in v["feedback"].replace("_", " ")
