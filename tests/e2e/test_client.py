"""The Python client and its verl / TRL adapters against a live `kernelgate serve`."""

import asyncio
import sys

import pytest

from conftest import REPO

sys.path.insert(0, str(REPO / "clients" / "python"))

from kernelgate_client import Client, KernelgateError, task_fields  # noqa: E402
from kernelgate_client.trl import reward_function  # noqa: E402
from kernelgate_client.verl import compute_score, compute_score_sync  # noqa: E402

ADD = (REPO / "datasets" / "ci" / "1_add_relu.py").read_text()
ADD_OK = (REPO / "datasets" / "solutions" / "ci" / "1_add_relu.py").read_text()
SOFTMAX = REPO / "datasets" / "ci" / "2_row_softmax.py"
SOFTMAX_OK = REPO / "datasets" / "solutions" / "ci" / "2_row_softmax.py"


def fenced(code, note=""):
    return f"Here is my kernel{note}.\n```python\n{code}\n```\n"


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    from conftest import Serve
    tmp = tmp_path_factory.mktemp("client")
    s = Serve(tmp / "data", tmp).start()
    yield Client(s.url)
    assert s.stop() == 0, s.log()


def test_task_fields_tells_ids_from_sources():
    assert task_fields("level2/1_gemm_bias_relu") == {"task_id": "level2/1_gemm_bias_relu"}
    assert task_fields(ADD) == {"reference": ADD.strip()}
    with pytest.raises(ValueError):
        task_fields("  ")
    with pytest.raises(ValueError, match="task_id="):   # a task id in the source field
        Client("http://127.0.0.1:9").rewards(reference="ci/1_add_relu", codes=["x"])


def test_rewards_come_back_in_request_order(client):
    resp = client.rewards(reference=ADD, reward_fn="binary",
                          completions=["I would rather not write code.", fenced(ADD_OK), fenced("import torch\n")])
    assert resp["rewards"] == [0.0, 1.0, 0.0]
    assert [v["status"] for v in resp["results"]] == ["invalid_submission", "correct", "invalid_submission"]


def test_finish_reasons_pass_through(client):
    """finish_reasons go as they are: "length" on code that runs to the end marks it cut
    off (invalid_submission, truncated, scored as a compile error); a closed fence is whole."""
    cut = ADD_OK[:ADD_OK.index("        n = x.numel()")]   # forward returns None
    resp = client.rewards(reference=ADD, reward_fn="kernelgym_tiered", completions=[fenced(ADD_OK), cut],
                          finish_reasons=["length", "length"])
    assert [v["status"] for v in resp["results"]] == ["correct", "invalid_submission"]
    assert resp["results"][1]["error_signature"] == "truncated" and resp["results"][1]["hack_flags"] == []
    assert resp["rewards"][1] == -0.5
    with pytest.raises(KernelgateError) as e:
        client.rewards(reference=ADD, completions=["x"], finish_reasons=[7])
    assert e.value.status == 400 and e.value.field == "finish_reasons[0]"


def test_gateway_errors_raise_with_their_code(client):
    with pytest.raises(KernelgateError) as e:
        client.rewards(reference=ADD, completions=[fenced(ADD_OK)], reward_fn="nope")
    assert e.value.status == 400 and e.value.code == "unknown_reward_fn" and e.value.field == "reward_fn"


def test_verl_compute_score_keeps_each_task_apart(client):
    """Concurrent samples of two tasks, interleaved, each scored against its own task
    (the coalescing inside verl's reward loop is tested in test_trainer_verl.py)."""
    softmax, softmax_ok = SOFTMAX.read_text(), SOFTMAX_OK.read_text()
    samples = [(fenced(softmax_ok), softmax), ("no code", ADD), (fenced(ADD_OK), ADD), (fenced(ADD_OK), softmax)]

    async def scores():
        return await asyncio.gather(*(compute_score("kernelgate", s, task, {"reward_fn": "binary"}, client=client)
                                      for s, task in samples))

    # the last one is a correct add_relu kernel judged against softmax: wrong
    assert [r["score"] for r in asyncio.run(scores())] == [1.0, 0.0, 1.0, 0.0]
    one = compute_score_sync("kernelgate", fenced(ADD_OK), ADD, None, client=client, reward_fn="binary")
    assert one["score"] == 1.0 and one["status"] == "correct" and one["correct"] == 1.0


def test_trl_reward_function_with_chat_completions(client):
    fn = reward_function(client=client, reward_fn="binary")
    assert fn.__name__ == "kernelgate_binary"
    chat = [[{"role": "assistant", "content": fenced(ADD_OK)}], [{"role": "assistant", "content": "sorry"}]]
    assert fn(prompts=["p", "p"], completions=chat, task=[ADD, ADD]) == [1.0, 0.0]
    with pytest.raises(ValueError, match="task"):
        fn(prompts=["p"], completions=["x"])


def test_trl_leaves_out_samples_the_gateway_marks_invalid(client):
    broken = ADD.replace("return torch.relu(x + y)", "raise RuntimeError('reference broke')")
    fn = reward_function(client=client, reward_fn="binary")
    assert fn(prompts=["p", "p"], completions=[fenced(ADD_OK), fenced(ADD_OK)], task=[broken, ADD]) == [None, 1.0]


def test_deadline_masks_a_straggler(client):
    slow = ADD_OK + "\nimport time as _t\n_f = ModelNew.forward\nModelNew.forward = lambda self, *a: (_t.sleep(60), _f(self, *a))[1]\n"
    resp = client.rewards(reference=ADD, codes=[slow], deadline_s=4, reward_fn="binary")
    assert resp["valid"] == [False] and resp["results"][0]["retry"] == "deadline", resp
