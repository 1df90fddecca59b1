"""Shared helpers for the test_eval_* modules (not a conftest: TRITON_INTERPRET must be
set by each module before triton is imported, and nothing else here touches triton)."""

import os
import tempfile

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "eval_fixtures")


def fixture(name):
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as f:
        return f.read()


def task(name):
    path = os.path.join(FIXTURES, name)
    return {"name": name[:-3], "path": path, "source": fixture(name)}


def run(tmp_path, task_file, code, mode="cpu_interpreter", **options):
    """One evaluation by a judge forked from this test process (no zygote): the judge forks
    its runners as in production; the test process itself never initialises CUDA."""
    job = {"task": task_file if isinstance(task_file, dict) else task(task_file),
           "code": code, "options": dict({"seeds": 3}, **options)}
    return judge_in_fork(job, str(tmp_path), mode)


def judge_in_fork(job, tmpdir, mode="cpu_interpreter"):
    import json
    from kgharness.judge.context import LocalContext
    from kgharness.judge.flow import evaluate
    device = "cuda:0" if mode == "gpu" else "cpu"
    os.makedirs(tmpdir, exist_ok=True)
    work = tempfile.mkdtemp(prefix="judge-", dir=tmpdir)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.close(r)
            v = evaluate(job, LocalContext(mode=mode, device=device, tmpdir=work))
            data = json.dumps(v).encode()
            while data:
                data = data[os.write(w, data):]
            code = 0
        finally:
            os._exit(code)
    os.close(w)
    chunks = []
    while True:
        b = os.read(r, 1 << 20)
        if not b:
            break
        chunks.append(b)
    os.close(r)
    os.waitpid(pid, 0)
    return json.loads(b"".join(chunks))


ADD_RELU = "cand_add_relu.py"


def patched(find, replace, name=ADD_RELU):
    src = fixture(name)
    assert find in src, find
    return src.replace(find, replace, 1)
