"""Shared helpers for the test_eval_* modules (not a conftest: TRITON_INTERPRET must be
set by each module before triton is imported, and nothing else here touches triton)."""

import os

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "eval_fixtures")


def fixture(name):
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as f:
        return f.read()


def task(name):
    path = os.path.join(FIXTURES, name)
    return {"name": name[:-3], "path": path, "source": fixture(name)}


def run(tmp_path, task_file, code, mode="cpu_interpreter", **options):
    from kgharness.context import LocalContext
    from kgharness.evaluate import evaluate
    device = "cuda:0" if mode == "gpu" else "cpu"
    ctx = LocalContext(mode=mode, device=device, tmpdir=str(tmp_path))
    job = {"task": task_file if isinstance(task_file, dict) else task(task_file),
           "code": code, "options": dict({"seeds": 3}, **options)}
    return evaluate(job, ctx)


ADD_RELU = "cand_add_relu.py"


def patched(find, replace, name=ADD_RELU):
    src = fixture(name)
    assert find in src, find
    return src.replace(find, replace, 1)
