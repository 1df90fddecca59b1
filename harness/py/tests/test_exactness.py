"""A task check's float64 pass (kgharness.runner.exactness): how much of its tolerance the
reference spends against its own exact answer, and the warning, with the tolerance to
declare, when an honest kernel could be rejected for rounding differently."""
import os

os.environ["TRITON_INTERPRET"] = "1"  # before triton is imported anywhere

import pytest  # noqa: E402

from _evalhelp import judge_in_fork, task  # noqa: E402
from kgharness.judge import reservation, taskcheck  # noqa: E402
from kgharness.runner import exactsize  # noqa: E402
from kgharness.runner.handler import Runner  # noqa: E402

GOOD = task("task_add_relu.py")

# Sixteen bf16 multiplications, each rounded: the exact product rounds once, so the two
# drift apart by up to several ULPs, past half of bf16's default rtol (2 ULPs).
DRIFT = '''"""bf16 rounded sixteen times."""
import torch
import torch.nn as nn

TAGS = ["bf16"]
{decl}

class Model(nn.Module):
    def forward(self, x):
        for _ in range(16):
            x = x * 1.0107
        return x


def get_inputs():
    return [torch.randn(64, 256, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
'''


def check(tmp_path, source, **options):
    t = dict(GOOD, source=source)
    job = {"task": t, "code": "", "options": dict({"seeds": 3}, **options), "task_check": True}
    return judge_in_fork(job, str(tmp_path))


def test_a_correctly_rounded_reference_spends_nothing(tmp_path):
    v = check(tmp_path, GOOD["source"])
    assert v["status"] == "correct", v["feedback"]
    err = v["task_info"]["reference_error"]
    # fp32 add and relu round once: the float64 copy rounded to fp32 is the same bits
    assert err["used"] == 0.0 and err["output"] == 0 and err["seed"] in (0, 1) and "elements" not in err, err
    assert not any("exact answer" in w for w in v["warnings"]), v["warnings"]
    assert "exactness" in v["stage_ms"]


def test_a_reference_that_rounds_often_is_warned_about_with_the_tolerance_to_declare(tmp_path):
    v = check(tmp_path, DRIFT.format(decl=""))
    assert v["status"] == "correct", v["feedback"]   # advice, never a rejection
    err = v["task_info"]["reference_error"]
    assert err["used"] > taskcheck.EXACT_WARN, err
    assert err["reference"] != err["exact"] and len(err["index"]) == 2, err
    said = [w for w in v["warnings"] if "exact answer" in w]
    assert len(said) == 1 and "bfloat16, default" in said[0] and "declare ATOL = " in said[0], said
    atol, rtol = (float(said[0].split(f"{k} = ")[1].split()[0]) for k in ("ATOL", "RTOL"))
    assert atol > 1e-2 and rtol > 1.6e-2
    # Under the tolerance it suggests, the same reference is no longer warned about.
    again = check(tmp_path, DRIFT.format(decl=f"ATOL = {atol!r}\nRTOL = {rtol!r}"))
    err2 = again["task_info"]["reference_error"]
    assert again["tolerance"]["source"] == "task" and err2["used"] <= taskcheck.EXACT_AIM, err2
    assert not any("exact answer" in w for w in again["warnings"]), again["warnings"]


@pytest.mark.parametrize("forward, note", [
    ("return (x.float() * 2).to(torch.bfloat16)", "casts inside forward()"),
    ("assert x.dtype == torch.bfloat16, 'bf16 only'\n        return x * 2", "raised AssertionError: bf16 only"),
])
def test_a_reference_whose_float64_copy_cannot_say_is_not_measured_and_says_why(tmp_path, forward, note):
    src = DRIFT.format(decl="").replace("for _ in range(16):\n            x = x * 1.0107\n        return x", forward)
    assert forward in src
    v = check(tmp_path, src)
    assert v["status"] == "correct", v["feedback"]
    err = v["task_info"]["reference_error"]
    assert err["used"] is None and note in err["note"], err


def test_a_pass_that_outlasts_the_checks_time_is_cut_and_the_task_still_passes(tmp_path):
    slow = DRIFT.format(decl="import time").replace(
        "        for _ in range(16):",
        "        if x.dtype == torch.float64:\n            time.sleep(60)\n        for _ in range(16):")
    assert "time.sleep(60)" in slow
    v = check(tmp_path, slow, timeout_s=12)
    assert v["status"] == "correct", v["feedback"]
    err = v["task_info"]["reference_error"]
    assert err["used"] is None and "took longer than" in err["note"] and "of its 12 s" in err["note"], err
    assert v["stage_ms"]["total"] < 12e3, v["stage_ms"]


def test_a_task_too_large_for_the_pass_or_of_unknown_size_is_not_measured():
    mib = 1 << 20
    huge = {"input_bytes": 4096 * mib, "param_bytes": 0, "output_bytes": 1024 * mib}
    err = taskcheck.reference_error(None, huge, {"atol": 1e-2, "rtol": 1e-2})
    assert err["used"] is None and "40960 MiB" in err["note"], err
    err = taskcheck.reference_error(None, {"input_bytes": None}, {"atol": 1e-2, "rtol": 1e-2})
    assert err["used"] is None and "unknown" in err["note"], err


def test_a_check_reserves_its_float64_pass_when_it_runs_one():
    mib = 1 << 20
    small = reservation.quotas_mb({"input_bytes": 100 * mib, "param_bytes": 0, "output_bytes": 10 * mib}, check=True)
    assert small["reference"] == reservation.MIN_RUNNER_MB + 8 * 110
    huge = reservation.quotas_mb({"input_bytes": 6000 * mib, "param_bytes": 0, "output_bytes": 1000 * mib}, check=True)
    assert huge["reference"] == 14000       # no pass: nothing reserved for it


TOL = {"atol": 1e-2, "rtol": 1.6e-2, "dtype": "bfloat16", "source": "default"}


def test_the_warning_scales_both_terms_and_says_when_no_rtol_helps():
    worst = {"used": 0.8, "seed": 1, "output": 0, "index": [3], "reference": 5.0, "exact": 5.1}
    assert "declare ATOL = 0.02 and RTOL = 0.032 " in taskcheck.exactness_warning(worst, TOL)
    assert "no RTOL up to 0.5 covers it" in taskcheck.exactness_warning(dict(worst, used=20.0), TOL)
    assert taskcheck.exactness_warning(dict(worst, used=0.5), TOL) is None
    assert taskcheck.exactness_warning({"used": None, "note": "x"}, TOL) is None
    no_atol = taskcheck.exactness_warning(dict(worst, reference=None), dict(TOL, atol=0.0, source="task"))
    assert "declare ATOL = 0 and RTOL = 0.032 " in no_atol and "? against 5.1" in no_atol, no_atol


def test_only_the_reference_runs_the_pass(tmp_path):
    r = Runner("candidate", {"options": {}}, "cpu_interpreter", "cpu", str(tmp_path))
    rep = r.handle({"op": "exact", "seed": 1, "atol": 1e-2, "rtol": 1e-2}, [])
    assert rep["ok"] is False and "for the reference" in rep["feedback"], rep


# One call of 1 MiB (a float64 pass of 8 MiB) with a held-out set of 16384 elements, the
# main call's count in DRIFT: the pass limit lowered below 8 MiB stands for a heavy task's
# 24 GiB.
LARGE = DRIFT.format(decl="").replace("torch.randn(64, 256,", "torch.randn(256, 1024,") + '''

def get_held_out_inputs():
    return [[torch.randn(32, {cols}, dtype=torch.bfloat16)]]
'''


def test_a_task_too_large_for_the_pass_is_measured_on_its_held_out_sets(tmp_path, monkeypatch):
    monkeypatch.setattr(exactsize, "EXACT_MAX_MB", 4.0)   # the judge is forked from here
    v = check(tmp_path, LARGE.format(cols=512))
    assert v["status"] == "correct", v["feedback"]
    err = v["task_info"]["reference_error"]
    assert err["held"] == 0 and "seed" not in err, err
    assert err["used"] > taskcheck.EXACT_WARN and len(err["index"]) == 2, err
    assert "held-out inputs only (16384 output elements; one main call has 262144)" in err["note"], err
    assert "8 MiB, more than 4" in err["note"] and "elements" not in err, err
    said = [w for w in v["warnings"] if "exact answer" in w]
    assert len(said) == 1 and "on held-out set 0" in said[0] and "declare ATOL = " in said[0], said


def test_a_held_out_set_too_large_for_the_room_left_is_not_measured_either(tmp_path, monkeypatch):
    monkeypatch.setattr(exactsize, "EXACT_MAX_MB", 4.0)
    # 32 x 4096 bf16 in and out: 0.5 MiB a call, 4 MiB in float64 against the 1 MiB that
    # the check's reservation holds beyond one main call.
    v = check(tmp_path, LARGE.format(cols=4096))
    assert v["status"] == "correct", v["feedback"]
    err = v["task_info"]["reference_error"]
    assert err["used"] is None and "held" not in err, err
    assert "its held-out sets: not measured: a float64 copy of this call needs about 4 MiB, more than 1" \
        in err["note"], err


def test_the_runner_sizes_a_call_before_it_copies_the_model():
    import torch
    from kgharness.runner import exactness

    class Twice(torch.nn.Module):
        def forward(self, x):
            return x * 2

    x = torch.randn(256, 1024, dtype=torch.bfloat16)     # 0.5 MiB in, 0.5 MiB out
    tol = {"atol": 1e-2, "rtol": 1.6e-2}
    got = exactness.measure(Twice(), lambda: [x.clone()], tol, max_mb=8.0)
    assert got["used"] == 0.0 and got["elements"] == 256 * 1024, got
    got = exactness.measure(Twice(), lambda: [x.clone()], tol, max_mb=7.0)
    assert got["used"] is None and "about 8 MiB, more than 7" in got["note"], got
