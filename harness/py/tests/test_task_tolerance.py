"""A task's own ATOL / RTOL: read by the judge from the task's source (literal numbers,
assigned once at module level), between the request's options and the dtype default;
anything else is a task error, never a silent default."""
import os

os.environ["TRITON_INTERPRET"] = "1"  # before triton is imported anywhere

import pytest  # noqa: E402
import torch  # noqa: E402

from _evalhelp import ADD_RELU, fixture, patched, run, task  # noqa: E402
from kgharness import correctness as C  # noqa: E402
from kgharness.runner import loader  # noqa: E402

BASE = "import torch\n\nclass Model: pass\n\ndef get_inputs(): return []\n\ndef get_init_inputs(): return []\n"


def _declared(extra):
    return loader.declared_tolerance({"name": "t", "source": BASE + extra})


def test_a_task_without_a_declaration_has_none():
    assert _declared("") == {}
    assert _declared("# RTOL is mentioned in a comment only\n") == {}


@pytest.mark.parametrize("extra, want", [
    ("RTOL = 3.2e-2\n", {"rtol": 3.2e-2}),
    ("ATOL = 0\nRTOL = 0.5\n", {"atol": 0.0, "rtol": 0.5}),
    ("ATOL: float = 1e-3\n", {"atol": 1e-3}),
])
def test_literal_module_level_numbers_are_read(extra, want):
    assert _declared(extra) == want


@pytest.mark.parametrize("extra, says", [
    ("RTOL = 1e-2 * 2\n", "literal number"),                      # computed, not literal
    ("RTOL = 1e-2\nRTOL = 2e-2\n", "assigned once"),
    ("RTOL = 1e-2\nif True:\n    RTOL = 0.4\n", "assigned once"),   # rebound under an if
    ("for RTOL in (1e-2,):\n    pass\n", "literal number"),
    ("RTOL = '1e-2'\n", "literal number"),
    ("ATOL = True\n", "literal number"),
    ("RTOL = 1.0\n", "outside [0, 0.5]"),                          # all-zeros would pass
    ("RTOL = -1e-3\n", "outside [0, 0.5]"),
    ("ATOL = float('inf')\n", "literal number"),
    ("ATOL = 1e400\n", "not a finite number"),
])
def test_anything_else_is_a_task_error_that_says_why(extra, says):
    with pytest.raises(loader.TaskError, match=r"^t: ") as e:
        _declared(extra)
    assert says in str(e.value)


def test_a_declaration_inside_a_function_or_class_is_not_the_tasks():
    assert _declared("def f():\n    RTOL = 0.3\n    return RTOL\n") == {}


def test_the_request_overrides_the_task_which_overrides_the_dtype_default():
    ref = [torch.ones(4, dtype=torch.bfloat16)]
    assert C.tolerance(ref, {}, {}) == {"atol": 1e-2, "rtol": 1.6e-2, "dtype": "bfloat16", "source": "default"}
    assert C.tolerance(ref, {}, {"rtol": 3.2e-2}) == \
        {"atol": 1e-2, "rtol": 3.2e-2, "dtype": "bfloat16", "source": "task"}
    # Each of atol and rtol on its own: the request's atol, the task's rtol.
    assert C.tolerance(ref, {"atol": 1e-3, "rtol": None}, {"atol": 0.5, "rtol": 3.2e-2}) == \
        {"atol": 1e-3, "rtol": 3.2e-2, "dtype": "bfloat16", "source": "request"}


# add_relu's outputs, 0.5% off: past the fp32 default (1e-4), inside a declared RTOL of 1e-2.
OFF = patched("tl.maximum(x + y, 0.0)", "tl.maximum(x + y, 0.0) * 1.005")


def _task(extra):
    t = task("task_add_relu.py")
    return dict(t, source=t["source"] + extra)


def test_an_evaluation_judges_by_the_tasks_declared_tolerance(tmp_path):
    v = run(tmp_path, "task_add_relu.py", OFF, seeds=1)
    assert v["status"] == "incorrect" and v["tolerance"]["source"] == "default", v["feedback"]
    v = run(tmp_path, _task("\nRTOL = 1e-2\n"), OFF, seeds=1)
    assert v["status"] == "correct", v["feedback"]
    assert v["tolerance"] == {"atol": 1e-4, "rtol": 1e-2, "dtype": "float32", "source": "task"}
    v = run(tmp_path, _task("\nRTOL = 1e-2\n"), OFF, seeds=1, rtol=1e-4)
    assert v["status"] == "incorrect" and v["tolerance"]["source"] == "request", v["feedback"]


def test_a_bad_declaration_fails_the_task_not_the_candidate(tmp_path):
    v = run(tmp_path, _task("\nRTOL = 0.9\n"), fixture(ADD_RELU), seeds=1)
    assert v["status"] == "harness_error"
    assert "RTOL = 0.9 is outside [0, 0.5]" in v["task_error"], v["task_error"]
