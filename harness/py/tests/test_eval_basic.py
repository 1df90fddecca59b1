import os

os.environ["TRITON_INTERPRET"] = "1"  # before triton is imported anywhere

from _evalhelp import ADD_RELU, fixture, patched, run, task  # noqa: E402


def test_honest_add_relu_is_correct(tmp_path):
    v = run(tmp_path, "task_add_relu.py", fixture(ADD_RELU))
    assert v["status"] == "correct", v["feedback"]
    assert v["correct"] and v["compiled"]
    assert v["hack_flags"] == []
    assert v["trials_passed"] == v["trials_total"] == 3
    assert v["triton_launches"] >= 3
    assert v["tolerance"] == {"atol": 1e-4, "rtol": 1e-4, "dtype": "float32", "source": "default"}
    assert v["speedup"] is None and v["runtime"] is None and v["timing_mode"] == "cpu_interpreter"
    assert v["coverage"] is None
    assert v["task_name"] == "task_add_relu"
    assert v["env"]["torch"] and v["env"]["triton"]
    for k in ("reference", "load", "correctness", "checks", "total"):
        assert k in v["stage_ms"]


def test_honest_matmul_bias_and_softmax(tmp_path):
    v = run(tmp_path, "task_matmul_bias.py", fixture("cand_matmul_bias.py"), seeds=2)
    assert v["status"] == "correct", v["feedback"]
    v = run(tmp_path, "task_softmax.py", fixture("cand_softmax.py"), seeds=2)
    assert v["status"] == "correct", v["feedback"]
    assert v["max_abs_error"] < 1e-5


def test_tolerance_from_request(tmp_path):
    v = run(tmp_path, "task_add_relu.py", fixture(ADD_RELU), seeds=1, atol=1e-3, rtol=0)
    assert v["tolerance"]["source"] == "request" and v["tolerance"]["atol"] == 1e-3


def test_wrong_result_is_incorrect_with_mismatch_feedback(tmp_path):
    code = patched("tl.maximum(x + y, 0.0)", "x + y")
    v = run(tmp_path, "task_add_relu.py", code)
    assert v["status"] == "incorrect"
    assert "mismatch in trial 0" in v["feedback"]
    assert "worst at index" in v["feedback"] and "expected" in v["feedback"]
    assert v["trials_passed"] == 0 and v["max_abs_error"] > 0.1
    assert v["speedup"] is None


def test_syntax_error_is_compile_error_with_line(tmp_path):
    code = fixture(ADD_RELU).replace("    def forward(self, x, y):", "    def forward(self, x y):")
    v = run(tmp_path, "task_add_relu.py", code)
    assert v["status"] == "compile_error"
    line = code.splitlines().index("    def forward(self, x y):") + 1
    assert f"line {line}" in v["feedback"]
    assert v["error_signature"].startswith("SyntaxError")


def test_import_error_is_compile_error(tmp_path):
    code = "import no_such_module_kg\n" + fixture(ADD_RELU)
    v = run(tmp_path, "task_add_relu.py", code)
    assert v["status"] == "compile_error" and not v["compiled"]
    assert 'File "candidate.py", line 1' in v["feedback"]
    assert v["error_signature"] == "ModuleNotFoundError: No module named <name>"


def test_exception_in_forward_is_runtime_error(tmp_path):
    code = patched("        out = torch.empty_like(x)\n", "        out = torch.empty_like(x)\n        raise ValueError('bad block 17')\n")
    v = run(tmp_path, "task_add_relu.py", code)
    assert v["status"] == "runtime_error"
    line = code.splitlines().index("        raise ValueError('bad block 17')") + 1
    assert f'File "candidate.py", line {line}, in forward' in v["feedback"]
    assert "ValueError: bad block 17" in v["feedback"]
    assert v["error_signature"] == "ValueError: bad block <n>"
    assert "kgharness" not in v["feedback"]


def test_kernel_error_inside_triton(tmp_path):
    code = patched("    tl.store(out_ptr + offs, tl.maximum(x + y, 0.0), mask=mask)",
                   "    tl.store(out_ptr + offs, tl.maximum(x + undefined_name, 0.0), mask=mask)")
    v = run(tmp_path, "task_add_relu.py", code)
    assert v["status"] in ("compile_error", "runtime_error")
    assert "undefined_name" in v["feedback"]


def test_invalid_submissions(tmp_path):
    cases = {
        "": "empty",
        "   \n\n": "empty",
        "import torch\nclass Model:\n    pass\n": "no ModelNew",
        "Sure! Here is a faster kernel, it uses shared memory and should be about 2x faster.": "not Python",
        "\x00\x01\x02binary\x00junk": "binary",
        "x" * 300: "over the limit",
    }
    for code, needle in cases.items():
        v = run(tmp_path, "task_add_relu.py", code, max_code_bytes=200)
        assert v["status"] == "invalid_submission", (code[:20], v)
        assert needle in v["feedback"], (needle, v["feedback"])


def test_modelnew_assignment_is_accepted(tmp_path):
    code = fixture(ADD_RELU).replace("class ModelNew(nn.Module):", "class _Impl(nn.Module):") + "\nModelNew = _Impl\n"
    v = run(tmp_path, "task_add_relu.py", code, seeds=1)
    assert v["status"] == "correct", v["feedback"]


def test_task_errors_are_harness_errors_naming_the_file(tmp_path):
    t = task("task_add_relu.py")
    broken = dict(t, source=t["source"].replace("def forward(self, x, y):", "def forward(self, x, y)"))
    v = run(tmp_path, broken, fixture(ADD_RELU))
    assert v["status"] == "harness_error" and "task_add_relu.py" in v["task_error"]
    assert "syntax error" in v["task_error"]
    degenerate = dict(t, source=t["source"].replace("return torch.relu(x + y)", "return torch.zeros_like(x)"))
    v = run(tmp_path, degenerate, fixture(ADD_RELU))
    assert v["status"] == "harness_error" and "degenerate" in v["task_error"]
    assert "task_add_relu.py" in v["task_error"]
    nomodel = dict(t, source=t["source"].replace("class Model(", "class Other("))
    v = run(tmp_path, nomodel, fixture(ADD_RELU))
    assert v["status"] == "harness_error" and "Model" in v["task_error"]
    raising = dict(t, source=t["source"].replace("return torch.relu(x + y)", "raise RuntimeError('boom')"))
    v = run(tmp_path, raising, fixture(ADD_RELU))
    assert v["status"] == "harness_error" and "boom" in v["task_error"]


def test_a_broken_reference_is_never_the_candidates_fault(tmp_path):
    """A placeholder, prose or incomplete reference is a task error whatever the candidate
    sends: prose, a syntax error or an honest kernel (prose + "..." was scored
    invalid_submission, a reward of 0 a trainer would learn from)."""
    t = task("task_add_relu.py")
    candidates = {"prose": "Here is my kernel, it is fast.", "syntax error": "class ModelNew(:\n  pass",
                  "honest": fixture(ADD_RELU), "empty": ""}
    references = {"placeholder": ("...", "get_inputs"), "prose": ("A model that adds and applies ReLU.", "syntax error"),
                  "no get_inputs": (t["source"].replace("def get_inputs(", "def inputs("), "get_inputs")}
    for rname, (source, why) in references.items():
        for cname, code in candidates.items():
            v = run(tmp_path, dict(t, source=source), code, seeds=1)
            assert v["status"] == "harness_error" and why in v["task_error"], (rname, cname, v["status"], v["feedback"])
            assert "task_add_relu.py" in v["task_error"], v["task_error"]


def test_a_reference_defining_its_names_under_if_or_try_is_valid(tmp_path):
    """The judge's static check must not reject a valid task whose definitions sit under a
    module-level if/try (names bound at run time are the runner's to judge)."""
    t = task("task_add_relu.py")
    guarded = "try:\n    import numpy\nexcept ImportError:\n    pass\nif True:\n" + \
        "\n".join("    " + line for line in t["source"].splitlines())
    v = run(tmp_path, dict(t, source=guarded), fixture(ADD_RELU), seeds=1)
    assert v["status"] == "correct", (v["status"], v["feedback"], v["task_error"])
