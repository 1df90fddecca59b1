"""A task whose reference fails at run time decides every item, whatever the candidate sent.

A real `kernelgate serve` (CPU mode) over a suite with three broken tasks (the reference
raises in forward, in get_inputs, in get_init_inputs) and the same three sent inline; prose,
an empty answer, a syntax error and an honest kernel each get harness_error with the task's
error and valid false, on every path: rewards, evaluations, episodes, OpenRLHF, and
`kernelgate eval` exits non-zero naming the task's error. The reference is checked once per
task, not once per item."""

import subprocess

import pytest

from conftest import BIN, REPO, Serve, logged_rows

TASK = (REPO / "datasets" / "ci" / "1_add_relu.py").read_text()
KERNEL = (REPO / "datasets" / "solutions" / "ci" / "1_add_relu.py").read_text()
SYNTAX = KERNEL.replace("def forward(self", "def forward(self,,", 1)

BROKEN = {
    "forward": ("return torch.relu(x + y)", "raise RuntimeError('forward is broken')", "forward is broken"),
    "inputs": ("def get_inputs():\n", "def get_inputs():\n    raise ValueError('no inputs today')\n", "no inputs today"),
    "init": ("def get_init_inputs():\n", "def get_init_inputs():\n    raise KeyError('init is broken')\n", "init is broken"),
}


def broken_source(name):
    old, new, _ = BROKEN[name]
    src = TASK.replace(old, new, 1)
    assert src != TASK, name
    return src


def fenced(code):
    return f"Here it is:\n```python\n{code}\n```\n"


CANDIDATES = {
    "prose": "Sorry, I cannot write this kernel.",
    "empty": "",
    "syntax error": fenced(SYNTAX),
    "honest": fenced(KERNEL),
}


@pytest.fixture(scope="module")
def s(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("broken")
    suite = tmp / "tasks" / "broken"
    suite.mkdir(parents=True)
    for name in BROKEN:
        (suite / f"{name}.py").write_text(broken_source(name))
    srv = Serve(tmp / "data", tmp, args=["--tasks", str(suite)]).start()
    yield srv
    assert srv.stop() == 0, srv.log()


def assert_task_error(v, name, where):
    want = BROKEN[name][2]
    assert v["status"] == "harness_error" and want in v["task_error"], (where, v)


def test_the_candidates_differ_from_each_other():
    assert SYNTAX != KERNEL and "ModelNew" in KERNEL


@pytest.mark.parametrize("name", sorted(BROKEN))
@pytest.mark.parametrize("how", ["task_id", "reference"])
def test_rewards(s, name, how):
    task = {"task_id": f"broken/{name}"} if how == "task_id" else {"reference": broken_source(name)}
    status, b = s.post("/v1/rewards", {**task, "completions": list(CANDIDATES.values()),
                                       "reward_fn": "kernelgym_tiered", "wait_s": 240})
    assert status == 200 and b["status"] == "done", b
    assert b["valid"] == [False] * len(CANDIDATES), b
    for v in b["results"]:
        assert_task_error(v, name, how)
    assert all("exclude" in n for n in b["notes"]), b["notes"]


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_evaluations(s, name):
    for label, completion in CANDIDATES.items():
        status, e = s.post("/v1/evaluations", {"reference": broken_source(name), "completion": completion,
                                               "wait_s": 240})
        assert status == 200 and e["valid"] is False, (label, e)
        assert_task_error(e["result"], name, label)


def test_episodes(s):
    for label, completion in CANDIDATES.items():
        status, ep = s.post("/v1/episodes", {"task_id": "broken/forward", "max_turns": 2})
        assert status == 201, ep
        status, st = s.post(f"/v1/episodes/{ep['episode_id']}/step", {"completion": completion})
        assert status == 200, (label, st)
        assert st["valid"] is False and st["done"] is True and st["done_reason"] == "task_error", (label, st)
        assert_task_error(st["observation"]["verdict"], "forward", label)
        hist = s.get(f"/v1/episodes/{ep['episode_id']}")[1]["history"]
        assert [h["valid"] for h in hist] == [False], hist


def test_openrlhf(s):
    prompt = "Write a kernel.\n"
    queries = [prompt + c for c in CANDIDATES.values()]
    for labels in (["broken/inputs"] * len(queries), [broken_source("inputs")] * len(queries)):
        status, out = s.post("/openrlhf/reward", {"query": queries, "prompts": [prompt] * len(queries),
                                                  "labels": labels})
        assert status == 200, out
        assert out["extra_logs"]["valid"] == [0] * len(queries), out
        assert out["extra_logs"]["status_harness_error"] == [1] * len(queries), out


def test_the_log_marks_every_row_a_task_error(s):
    """What the trainer was told is what the log keeps: no row blames a candidate."""
    import time

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        rows = logged_rows(s.data, "evaluations", ["status", "task_error"])
        if len(rows) >= 3 * 2 * len(CANDIDATES):
            break
        time.sleep(0.5)
    assert rows and all(r["status"] == "harness_error" and r["task_error"] for r in rows), rows


@pytest.mark.parametrize("label", sorted(CANDIDATES))
def test_eval_cli_exits_nonzero_with_the_tasks_error(tmp_path, label):
    task = tmp_path / "broken.py"
    task.write_text(broken_source("forward"))
    kernel = tmp_path / "kernel.md"
    kernel.write_text(CANDIDATES[label])
    p = subprocess.run([str(BIN), "eval", "--task", str(task), "--kernel", str(kernel), "--seeds", "2"],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode != 0, (p.stdout, p.stderr)
    assert "forward is broken" in p.stderr, (p.stdout, p.stderr)


def test_eval_cli_prose_against_a_working_task_is_still_the_files_fault(tmp_path):
    task = tmp_path / "task.py"
    task.write_text(TASK)
    kernel = tmp_path / "kernel.md"
    kernel.write_text(CANDIDATES["prose"])
    p = subprocess.run([str(BIN), "eval", "--task", str(task), "--kernel", str(kernel), "--seeds", "2"],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 2 and "no code found" in p.stderr, (p.returncode, p.stderr)
