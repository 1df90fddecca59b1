"""The HTTP API of a real `kernelgate serve` (CPU mode), as trainers use it: batches and
their NDJSON stream, single evaluations, tasks, a multi-turn episode, OpenRLHF's shape,
and the bad input the issue lists."""

import json
import time
import urllib.request

import pytest

from conftest import REPO, Serve

TASK = (REPO / "datasets" / "ci" / "1_add_relu.py").read_text()
KERNEL = (REPO / "datasets" / "solutions" / "ci" / "1_add_relu.py").read_text()
WRONG = KERNEL.replace("tl.maximum(x + y, 0.0)", "tl.maximum(x - y, 0.0)")


def fenced(code):
    return f"Here you go.\n```python\n{code}\n```\n"


@pytest.fixture(scope="module")
def s(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("api")
    srv = Serve(tmp / "data", tmp).start()
    yield srv
    assert srv.stop() == 0, srv.log()


def test_wrong_kernel_is_really_wrong():
    assert WRONG != KERNEL, "the solution changed: WRONG must differ from it"


def test_batch_202_then_get_and_stream_every_index_once(s):
    codes = [KERNEL + f"\n# {time.time()} {i}\n" for i in range(3)] + [WRONG]
    status, ref = s.post("/v1/rewards", {"reference": TASK, "codes": codes, "wait_s": 0, "reward_fn": "binary"})
    assert status == 202 and ref["status"] == "running" and ref["total"] == 4, ref
    assert s.last_headers["Location"] == ref["location"] == f"/v1/batches/{ref['batch_id']}"
    # The stream yields each index once as it finishes, then ends.
    with urllib.request.urlopen(s.url + ref["location"] + "/stream", timeout=300) as r:
        assert r.headers.get_content_type() == "application/x-ndjson"
        lines = [json.loads(x) for x in r.read().decode().splitlines() if x.strip()]
    assert sorted(x["index"] for x in lines) == [0, 1, 2, 3]
    assert {x["index"]: x["reward"] for x in lines} == {0: 1.0, 1: 1.0, 2: 1.0, 3: 0.0}
    status, b = s.get(ref["location"])
    assert status == 200 and b["status"] == "done" and b["done"] == 4
    assert [v["status"] for v in b["results"]] == ["correct"] * 3 + ["incorrect"]
    assert all(v["exec_ms"] > 0 and v["queue_wait_ms"] >= 0 for v in b["results"])


def test_single_evaluation_and_the_cache(s):
    body = {"reference": TASK, "code": KERNEL + "\n# single\n", "wait_s": 120}
    status, e = s.post("/v1/evaluations", body)
    assert status == 200 and e["status"] == "done" and e["result"]["status"] == "correct", e
    status, again = s.post("/v1/evaluations", body)
    assert status == 200 and again["cached"] is True and "exec_ms" not in again["result"], again
    assert s.get(f"/v1/evaluations/{e['id']}")[1]["result"]["code_hash"] == e["result"]["code_hash"]


def test_tasks_rewards_by_id_and_an_episode(s):
    status, page = s.get("/v1/tasks?limit=100")
    ids = [t["id"] for t in page["tasks"]]
    assert status == 200 and "ci/1_add_relu" in ids and "level2/1_gemm_bias_relu" in ids
    status, task = s.get("/v1/tasks/ci/1_add_relu")
    assert status == 200 and "ModelNew" in task["prompt"] and task["source"] == TASK
    status, resp = s.post("/v1/rewards", {"task_id": "ci/1_add_relu", "completions": [fenced(KERNEL)],
                                          "reward_fn": "binary", "wait_s": 120})
    assert status == 200 and resp["rewards"] == [1.0], resp
    status, bad = s.post("/v1/tasks", {"id": "mine/broken", "source": "import torch\nclass Model(:\n"})
    assert status == 422 and bad["code"] == "task_invalid", bad

    status, ep = s.post("/v1/episodes", {"task_id": "ci/1_add_relu", "max_turns": 3, "reward_fn": "binary"})
    assert status == 201 and ep["turn"] == 0 and "ModelNew" in ep["observation"]["prompt"], ep
    path = f"/v1/episodes/{ep['episode_id']}"
    status, st1 = s.post(path + "/step", {"completion": fenced(WRONG)})
    assert status == 200 and st1["done"] is False and st1["reward"] == 0.0, st1
    assert "mismatch" in st1["observation"]["feedback"].lower()
    status, st2 = s.post(path + "/step", {"completion": fenced(KERNEL)})
    assert status == 200 and st2["done"] is True and st2["turn"] == 2, st2
    status, err = s.post(path + "/step", {"completion": fenced(KERNEL)})
    assert status == 409 and err["code"] == "episode_done", err
    hist = s.get(path)[1]
    assert hist["state"] == "done" and len(hist["history"]) == 2, hist


def test_openrlhf_shape(s):
    prompt = "Write a faster kernel.\n"
    status, out = s.post("/openrlhf/reward?reward_fn=binary", {
        "query": [prompt + fenced(KERNEL), prompt + "I cannot.", prompt + fenced(WRONG)],
        "prompts": [prompt] * 3, "labels": ["ci/1_add_relu", "ci/1_add_relu", TASK]})
    assert status == 200, out
    assert out["rewards"] == [1.0, 0.0, 0.0] and out["scores"] == [1, 0, 0]
    assert out["extra_logs"]["correct"] == [1, 0, 0] and out["extra_logs"]["compiled"][2] == 1


@pytest.mark.parametrize("name,body,status,code", [
    ("malformed JSON", b'{"reference": ', 400, "bad_json"),
    ("unknown task id", {"task_id": "ci/nope", "codes": ["x"]}, 404, "task_not_found"),
    ("10,000 completions", {"reference": TASK, "completions": ["x"] * 10000}, 400, "too_many_items"),
    ("unknown reward", {"reference": TASK, "codes": ["x"], "reward_fn": "fastest"}, 400, "unknown_reward_fn"),
    ("50 MB body", {"reference": TASK, "completions": ["x" * (50 << 20)]}, 413, "body_too_large"),
])
def test_bad_input_gets_a_precise_4xx_and_the_gateway_keeps_serving(s, name, body, status, code):
    if isinstance(body, bytes):
        req = urllib.request.Request(s.url + "/v1/rewards", data=body, method="POST",
                                     headers={"Content-Type": "application/json"})
        try:
            urllib.request.urlopen(req, timeout=60)
            got, err = 200, {}
        except urllib.error.HTTPError as e:
            got, err = e.code, json.loads(e.read())
    else:
        got, err = s.post("/v1/rewards", body)
    assert (got, err.get("code")) == (status, code), (name, got, err)
    assert err["message"], name
    assert s.get("/healthz")[0] == 200


def test_a_completion_without_code_is_an_item_verdict_not_a_request_error(s):
    status, resp = s.post("/v1/rewards", {"reference": TASK, "completions": ["Sorry, no code.", fenced(KERNEL)],
                                          "reward_fn": "binary", "wait_s": 120})
    assert status == 200 and [v["status"] for v in resp["results"]] == ["invalid_submission", "correct"]
    assert "fenced" in resp["results"][0]["feedback"]


def test_a_broken_reference_is_masked_not_scored(s):
    """Not the candidate's fault: the trainer is told to drop the sample, not learn from a 0."""
    broken = TASK.replace("return torch.relu(x + y)", "raise RuntimeError('reference broke')")
    assert broken != TASK
    status, b = s.post("/v1/rewards", {"reference": broken, "codes": [KERNEL], "wait_s": 120})
    assert status == 200, b
    v = b["results"][0]
    assert v["status"] == "harness_error" and "reference broke" in v["task_error"], v
    assert b["valid"] == [False] and "exclude" in b["notes"][0] and b["rewards"] == [0.0], b
    status, ok = s.post("/v1/rewards", {"reference": TASK, "codes": [KERNEL + "\n# valid\n"], "wait_s": 120})
    assert ok["valid"] == [True], ok


def test_a_broken_reference_is_never_the_candidates_fault(s):
    """The README's placeholder reference with prose was scored invalid_submission,
    valid, reward 0. A one-line reference is refused; a broken one is a task error, masked,
    whatever the candidate is: prose, no code, or an honest kernel; on both routes."""
    for path, body in (("/v1/rewards", {"reference": "...", "codes": ["Here is my kernel."]}),
                       ("/v1/evaluations", {"reference": "ci/1_add_relu", "code": KERNEL})):
        status, err = s.post(path, body)
        assert (status, err["code"], err["field"]) == (400, "invalid_request", "reference"), err
        assert "task_id" in err["message"], err
    broken = "import torch\n# the model goes here\n"
    for cand in ({"code": "Here is my kernel, it is fast."}, {"completion": "I would fuse the ops."},
                 {"completion": fenced(KERNEL)}):
        status, e = s.post("/v1/evaluations", dict(cand, reference=broken, wait_s=120))
        assert status == 200 and e["result"]["status"] == "harness_error", (cand, e)
        assert "does not define Model" in e["result"]["task_error"] and e["valid"] is False, (cand, e)
    status, b = s.post("/v1/rewards", {"reference": broken, "wait_s": 120,
                                       "completions": ["Sorry, no code.", fenced(KERNEL)]})
    assert status == 200 and [v["status"] for v in b["results"]] == ["harness_error"] * 2, b
    assert b["valid"] == [False, False], b


def test_deadline_gives_up_on_a_straggler(s):
    """deadline_s: the slow item is stopped and masked at the deadline, the honest one is
    scored, and the answer comes at the deadline, not at the straggler's timeout."""
    slow = KERNEL + "\nimport time as _t\n_f = ModelNew.forward\nModelNew.forward = lambda self, *a: (_t.sleep(60), _f(self, *a))[1]\n"
    t0 = time.monotonic()
    status, b = s.post("/v1/rewards", {"reference": TASK, "codes": [KERNEL + "\n# deadline\n", slow],
                                       "deadline_s": 8, "wait_s": 120, "reward_fn": "binary"})
    took = time.monotonic() - t0
    assert status == 200 and b["results"][0]["status"] == "correct", b
    late = b["results"][1]
    assert late["status"] == "harness_error" and late["retry"] == "deadline" and b["valid"] == [True, False], b
    assert took < 40, took
