"""kernelgate_client.verl inside verl 0.9's own reward loop, against a live `kernelgate serve`.

The prompts are the gateway's verl export read by verl's RLHFDataset; the rewards are
computed by verl's RewardLoopWorker (the class the trainer runs as a ray actor, built
here without ray) with its default reward manager (naive), loading the reward file by
plain path and by pkg://. Each of the 2 groups (one honest and one wrong completion of
one task) must reach the gateway as exactly one POST /v1/rewards.

Run under the trainers' venv (tests/trainers/setup-venv.sh):
    KERNELGATE_PYTHON=$PWD/.venv/bin/python .venv-trainers/bin/python -m pytest tests/e2e/test_trainer_verl.py
"""

import asyncio
import inspect
import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from conftest import REPO, Serve
from tiny_tokenizer import byte_bpe

import verl
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf
from transformers import PreTrainedTokenizerFast
from verl import DataProto
from verl.experimental.reward_loop import RewardLoopWorker
from verl.experimental.reward_loop.reward_manager.naive import NaiveRewardManager
from verl.trainer.ppo import core_algos
from verl.utils.dataset.rl_dataset import RLHFDataset, collate_fn

CLIENT = REPO / "clients" / "python"
sys.path.insert(0, str(CLIENT))  # for pkg://kernelgate_client.verl, as `pip install clients/python` would

from kernelgate_client.verl import compute_score  # noqa: E402
PLAIN = str(CLIENT / "kernelgate_client" / "verl.py")
TASKS = ["ci/1_add_relu", "ci/2_row_softmax"]
SOLUTIONS = REPO / "datasets" / "solutions" / "ci"
ADD_OK = (SOLUTIONS / "1_add_relu.py").read_text()
SOFTMAX_OK = (SOLUTIONS / "2_row_softmax.py").read_text()
# Per task: (honest, wrong). The wrong add_relu kernel is evaluated and fails the
# check; the wrong softmax answer has no code at all.
ANSWERS = {
    "ci/1_add_relu": (ADD_OK, ADD_OK.replace("tl.maximum(x + y, 0.0)", "tl.maximum(x - y, 0.0)")),
    "ci/2_row_softmax": (SOFTMAX_OK, None),
}
# An honest kernel whose forward sleeps: the request's deadline_s stops it, a harness
# error (valid false) that is not the model's doing.
SLOW = ADD_OK + ("\nimport time as _t\n_f = ModelNew.forward\n"
                 "ModelNew.forward = lambda self, *a: (_t.sleep(600), _f(self, *a))[1]\n")
DEADLINE_S = 25
CHAT = ("{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}<|eos|>{% endfor %}"
        "{% if add_generation_prompt %}<|assistant|>{% endif %}")


def fenced(code):
    return "I cannot write this kernel." if code is None else f"Here is my kernel.\n```python\n{code}\n```\n"


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("verl")
    with pytest.MonkeyPatch.context() as mp:
        for k, v in {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "HF_HOME": str(tmp / "hf")}.items():
            mp.setenv(k, v)
        srv = Serve(tmp / "data", tmp).start()
        try:
            yield tmp, srv
        finally:
            assert srv.stop() == 0, srv.log()


@pytest.fixture(scope="module")
def tokenizer_dir(env):
    """A byte-level BPE tokenizer trained on the tasks (so decode gives the text back
    exactly), with a chat template, saved where verl's hf_tokenizer loads it."""
    tmp, _ = env
    texts = [p.read_text() for p in (REPO / "datasets" / "ci").glob("*.py")] + [ADD_OK, SOFTMAX_OK]
    fast = byte_bpe(texts, ["<|pad|>", "<|eos|>", "<|user|>", "<|assistant|>"], eos="<|eos|>", pad="<|pad|>",
                    chat_template=CHAT, vocab_size=2000)
    fast.save_pretrained(tmp / "tokenizer")
    return str(tmp / "tokenizer")


@pytest.fixture(scope="module")
def rows(env, tokenizer_dir):
    """The gateway's verl export of TASKS read by verl's RLHFDataset."""
    tmp, srv = env
    status, m = srv.post("/v1/exports", {"format": "verl", "task": TASKS, "test_fraction": 0})
    assert status == 201 and m["files"] == {"train.parquet": 2, "test.parquet": 0}, m
    tok = PreTrainedTokenizerFast.from_pretrained(tokenizer_dir)
    ds = RLHFDataset(str(tmp / "data" / "exports" / m["export_id"] / "train.parquet"), tok, OmegaConf.create(
        {"cache_dir": str(tmp / "verl-cache"), "max_prompt_length": 4096, "filter_overlong_prompts_workers": 1}))
    assert len(ds) == 2, "a prompt was filtered out as too long"
    out = [ds[i] for i in range(len(ds))]
    assert [r["task_id"] for r in out] == TASKS  # the top-level column OpenRLHF's --data.label_key needs
    assert [r["reward_model"]["ground_truth"] for r in out] == TASKS
    return out


def rollout_batch(tokenizer_dir, rows, responses):
    """A DataProto as verl's trainer holds it after rollout: rows through collate_fn, with
    the trainer's uid per row, each repeated once per text of responses[row]."""
    tok = PreTrainedTokenizerFast.from_pretrained(tokenizer_dir)
    n = len(responses[0])
    assert all(len(r) == n for r in responses)
    data = DataProto.from_single_dict(collate_fn(rows))
    data.non_tensor_batch["uid"] = np.array([f"uid-{i}" for i in range(len(rows))], dtype=object)
    data = data.repeat(n, interleave=True)
    prompts = [tok.apply_chat_template(r["raw_prompt"], add_generation_prompt=True, tokenize=True,
                                       return_dict=False) for r in rows for _ in range(n)]
    responses = [tok(text, add_special_tokens=False)["input_ids"] + [tok.eos_token_id]
                 for texts in responses for text in texts]
    p_len, r_len = max(map(len, prompts)), max(map(len, responses))
    pad = tok.pad_token_id
    # verl's layout: prompts left-padded, responses right-padded, one attention mask.
    p_ids = torch.tensor([[pad] * (p_len - len(p)) + p for p in prompts])
    r_ids = torch.tensor([r + [pad] * (r_len - len(r)) for r in responses])
    mask = torch.tensor([[0] * (p_len - len(p)) + [1] * len(p) + [1] * len(r) + [0] * (r_len - len(r))
                         for p, r in zip(prompts, responses)])
    return data.union(DataProto.from_dict(tensors={
        "prompts": p_ids, "responses": r_ids, "input_ids": torch.cat([p_ids, r_ids], 1), "attention_mask": mask}))


@pytest.fixture(scope="module")
def batch(tokenizer_dir, rows):
    """Each row repeated for 2 responses (honest, wrong)."""
    return rollout_batch(tokenizer_dir, rows, [[fenced(code) for code in ANSWERS[t]] for t in TASKS])


def worker(tokenizer_dir, path, **reward_kwargs):
    """verl's RewardLoopWorker on verl's own reward config (trainer/config/reward/reward.yaml)."""
    reward = OmegaConf.load(Path(verl.__file__).parent / "trainer" / "config" / "reward" / "reward.yaml")
    reward.custom_reward_function = {"path": path, "name": "compute_score", "reward_kwargs": reward_kwargs}
    config = OmegaConf.create({"actor_rollout_ref": {"model": {"path": tokenizer_dir, "tokenizer_path": None}},
                               "reward": reward})
    return RewardLoopWorker(config)


def reward_posts(srv):
    status, text = srv.get("/metrics")
    assert status == 200, text
    text = text.decode() if isinstance(text, bytes) else text
    return sum(float(n) for n in re.findall(
        r'^kernelgate_http_requests_total\{[^}]*method="POST",route="/v1/rewards"[^}]*\} (\S+)$', text, re.M))


@pytest.mark.parametrize("path, kwargs", [
    (PLAIN, {"group_size": 2, "window_s": 60}),        # sent as soon as the group is in
    ("pkg://kernelgate_client.verl", {"window_s": 1}),  # sent when the window closes
], ids=["plain_path", "pkg"])
def test_verl_reward_loop_sends_one_request_per_group(env, tokenizer_dir, batch, path, kwargs):
    _, srv = env
    w = worker(tokenizer_dir, path, url=srv.url, **kwargs)
    assert w.reward_manager.is_async_reward_score  # awaited in verl's loop, no thread per sample
    before = reward_posts(srv)
    # What the trainer's RewardLoopManager.compute_rm_score asks of each worker: every
    # sample of its chunk scored concurrently, one run_single each.
    out = w.loop.run_until_complete(w.compute_score_batch(batch))
    assert reward_posts(srv) - before == len(TASKS), "want one POST /v1/rewards per group"

    scores = [o["reward_score"] for o in out]
    info = [o["reward_extra_info"] for o in out]
    for g in range(len(TASKS)):
        honest, wrong = scores[2 * g], scores[2 * g + 1]
        assert honest > wrong, (TASKS[g], scores, info)
    assert [i["status"] for i in info] == ["correct", "incorrect", "correct", "invalid_submission"], info
    assert [i["correct"] for i in info] == [1.0, 0.0, 1.0, 0.0]
    assert [i["valid"] for i in info] == [1.0] * 4
    # CPU mode times nothing comparable: the verdict's speedup is null (docs/protocol.md),
    # and so is the key; test_speedup_and_numpy_inputs shows a timed one coming through.
    assert [i["speedup"] for i in info] == [None] * 4 and all(i["latency_s"] >= 0 for i in info)

    # The rest of RewardLoopManager.compute_rm_score: the score at each response's last
    # token, and every extra key as one numpy column that verl's metrics read.
    rm = w.reward_manager.assemble_rm_scores(batch, scores)
    last = batch.batch["attention_mask"][:, batch.batch["prompts"].shape[1]:].sum(1) - 1
    assert rm[torch.arange(4), last].tolist() == pytest.approx(scores) and rm.sum().item() == pytest.approx(sum(scores))
    columns = {k: np.array([i[k] for i in info]) for k in info[0]}
    assert set(columns) == {"score", "status", "correct", "speedup", "valid", "latency_s"}


def readme_verl_overrides():
    """The client README's verl override lines, split as a shell would."""
    text = (CLIENT / "README.md").read_text()
    blocks = [b for b in re.findall(r"^```[a-z]*\n(.*?)^```", text, re.M | re.S) if "reward.custom_reward_function.path=" in b]
    assert len(blocks) == 1, f"want one verl override block in clients/python/README.md, found {len(blocks)}"
    return [arg for line in blocks[0].splitlines() for arg in shlex.split(line, comments=True)]


def test_the_readmes_verl_overrides_compose_and_drive_verls_reward_loop(env, tokenizer_dir, batch):
    """The client README's overrides composed by hydra over verl's own ppo_trainer config
    (as `python -m verl.trainer.main_ppo` does), the gateway's address and the trainer's
    model and rollout.n aside: verl's loader finds compute_score, every reward_kwarg is
    one it takes, and verl's RewardLoopWorker built from that config sends each group as
    one request."""
    _, srv = env
    overrides = [o.replace("http://GATEWAY:8080", srv.url) for o in readme_verl_overrides()]
    assert any(srv.url in o for o in overrides), overrides
    with initialize_config_dir(config_dir=str(Path(verl.__file__).parent / "trainer" / "config"), version_base=None):
        cfg = compose(config_name="ppo_trainer", overrides=overrides + [
            f"actor_rollout_ref.model.path={tokenizer_dir}", "actor_rollout_ref.rollout.n=2"])
    assert cfg.reward.num_workers == 1
    kwargs = dict(cfg.reward.custom_reward_function.reward_kwargs)
    params = inspect.signature(compute_score).parameters
    assert set(kwargs) <= {n for n, p in params.items() if p.kind == p.KEYWORD_ONLY}, kwargs
    assert kwargs["group_size"] == 2, kwargs  # ${actor_rollout_ref.rollout.n}

    w = RewardLoopWorker(cfg)
    before = reward_posts(srv)
    out = w.loop.run_until_complete(w.compute_score_batch(batch))
    assert reward_posts(srv) - before == len(TASKS), "want one POST /v1/rewards per group"
    assert [o["reward_extra_info"]["status"] for o in out] == ["correct", "incorrect", "correct", "invalid_submission"]


class FakeClient:
    """Answers POST /v1/rewards as a GPU gateway would, and records each request."""

    def __init__(self):
        self.requests = []

    def rewards(self, **body):
        self.requests.append(body)
        n = len(body["completions"])
        return {"rewards": [1.5, None][:n], "valid": [True, False][:n], "results": [
            {"status": "correct", "correct": True, "speedup": 1.25},
            {"status": "harness_error", "correct": False, "speedup": None}][:n]}


def test_speedup_and_numpy_inputs():
    """verl's non_tensor_batch hands over numpy strings and object arrays (the old
    batched path died on `extra_infos or ...`: "truth value ... is ambiguous")."""
    fake = FakeClient()
    info = {"options": {"seeds": np.int64(2)}, "tags": np.array(["a", "b"], dtype=object)}

    async def group():
        return await asyncio.gather(*(compute_score(np.str_("kernelgate/ci"), s, np.str_("ci/1_add_relu"), info,
                                                    client=fake, group_size=2) for s in ("a", "b")))

    ok, bad = asyncio.run(group())
    assert fake.requests == [{"completions": ["a", "b"], "reward_fn": None, "options": {"seeds": 2},
                              "task_id": "ci/1_add_relu"}]
    assert ok == {"score": 1.5, "status": "correct", "correct": 1.0, "speedup": 1.25, "valid": 1.0,
                  "latency_s": ok["latency_s"]}
    # The invalid sample scores its group's mean valid reward: 1.5, the only valid one.
    assert bad["score"] == 1.5 and bad["valid"] == 0.0 and bad["speedup"] is None
    with pytest.raises(ValueError, match="ground_truth"):
        asyncio.run(compute_score("kernelgate/ci", "a", np.array([], dtype=object), client=fake))


def test_the_prompt_in_extra_info_goes_with_the_group():
    """kernelgate's verl export repeats each prompt in extra_info (verl hands
    compute_score no prompt): the group's request carries them, one per sample."""
    fake = FakeClient()
    msgs = np.array([{"role": "user", "content": np.str_("write it")}], dtype=object)

    async def group():
        return await asyncio.gather(*(compute_score("kernelgate/ci", s, "ci/1_add_relu", {"prompt": p},
                                                    client=fake, group_size=2) for s, p in (("a", msgs), ("b", "plain"))))

    asyncio.run(group())
    assert fake.requests[0]["prompts"] == [[{"role": "user", "content": "write it"}], "plain"], fake.requests


def test_plain_path_loads_where_the_package_is_not_importable(tmp_path):
    """verl execs a custom_reward_function.path outside any package; the file must find
    its own package (the README's first config used to die on a relative import)."""
    code = ("import inspect, sys\n"
            "from verl.utils.import_utils import load_extern_object\n"
            "try:\n    import kernelgate_client\nexcept ImportError:\n    pass\n"
            "else:\n    sys.exit('kernelgate_client importable before the load')\n"
            f"f = load_extern_object({PLAIN!r}, 'compute_score')\n"
            "assert inspect.iscoroutinefunction(f), f\n")
    p = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                       env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    assert p.returncode == 0, p.stderr[-2000:]


def test_coalescing_waits_for_the_group_within_the_window():
    """Samples of a group end their rollouts at different times: one request holds those
    that came within window_s of the first, or as soon as group_size of them are in."""
    async def late(delay, code, **kw):
        await asyncio.sleep(delay)
        return await compute_score("kernelgate/ci", code, "ci/1_add_relu", None, client=fake, **kw)

    async def run(*calls):
        return await asyncio.gather(*calls)

    fake = FakeClient()
    start = time.monotonic()
    asyncio.run(run(late(0, "a", group_size=2, window_s=30), late(0.3, "b", group_size=2, window_s=30)))
    assert [r["completions"] for r in fake.requests] == [["a", "b"]]
    assert time.monotonic() - start < 5, "a full group is sent at once, not at the window's end"

    fake = FakeClient()
    asyncio.run(run(late(0, "a", window_s=0.6), late(0.2, "b", window_s=0.6), late(1.0, "c", window_s=0.6)))
    assert [r["completions"] for r in fake.requests] == [["a", "b"], ["c"]]


def test_an_invalid_sample_gets_zero_grpo_advantage(env, tokenizer_dir, rows):
    """One group (one uid) of 3 through verl's reward loop: an honest kernel, prose, and a
    kernel the request's deadline_s stops (harness_error, valid false). The invalid one
    scores the mean of the valid two, so verl's own GRPO advantage leaves it at 0; under
    kernelgym_tiered a 0 would rank it above the prose (-0.5) and train it as good."""
    _, srv = env
    data = rollout_batch(tokenizer_dir, rows[:1], [[fenced(ADD_OK), "I cannot write this kernel.", fenced(SLOW)]])
    w = worker(tokenizer_dir, PLAIN, url=srv.url, group_size=3, window_s=120, reward_fn="kernelgym_tiered",
               deadline_s=DEADLINE_S)
    out = w.loop.run_until_complete(w.compute_score_batch(data))
    scores = [o["reward_score"] for o in out]
    info = [o["reward_extra_info"] for o in out]
    assert [i["status"] for i in info] == ["correct", "invalid_submission", "harness_error"], info
    assert [i["valid"] for i in info] == [1.0, 1.0, 0.0], info
    assert scores[:2] == pytest.approx([0.2, -0.5]), scores  # correct (not timed on a CPU: 1.0x), no code
    assert scores[2] == pytest.approx((scores[0] + scores[1]) / 2), scores

    rm = w.reward_manager.assemble_rm_scores(data, scores)
    response_mask = data.batch["attention_mask"][:, data.batch["prompts"].shape[1]:]
    adv, _ = core_algos.compute_grpo_outcome_advantage(rm, response_mask, data.non_tensor_batch["uid"])
    assert adv[2].abs().max().item() < 1e-5, adv[2]
    assert adv[0].max().item() > 0.5 and adv[1].min().item() < -0.5, adv
    # What a score of 0 (invalid_reward zero, this adapter's old value) trains: a positive
    # advantage, above the prose's.
    zero = scores[:2] + [0.0]
    adv0, _ = core_algos.compute_grpo_outcome_advantage(w.reward_manager.assemble_rm_scores(data, zero),
                                                        response_mask, data.non_tensor_batch["uid"])
    assert adv0[2].max().item() > 0.1, adv0[2]


class InvalidClient:
    """Answers POST /v1/rewards for [valid 1.0, valid -0.5, invalid] and records each request."""

    def __init__(self):
        self.requests = []

    def rewards(self, **body):
        self.requests.append(body)
        return {"rewards": [1.0, -0.5, 0.0], "valid": [True, True, False], "results": [
            {"status": "correct", "correct": True}, {"status": "compile_error"}, {"status": "harness_error"}]}


def group_scores(client, **kw):
    async def group():
        return await asyncio.gather(*(compute_score("kernelgate/ci", s, "ci/1_add_relu", None, client=client,
                                                    group_size=3, **kw) for s in "abc"))
    return [r["score"] for r in asyncio.run(group())]


def test_invalid_reward_options():
    """neutral (the default): the valid ones' mean; zero: 0.0; none: None, which verl's own
    reward managers cannot take (what compute_rm_score does with the scores: TypeError)."""
    assert group_scores(InvalidClient()) == [1.0, -0.5, 0.25]
    assert group_scores(InvalidClient(), invalid_reward="neutral") == [1.0, -0.5, 0.25]
    assert group_scores(InvalidClient(), invalid_reward="zero") == [1.0, -0.5, 0.0]
    none = group_scores(InvalidClient(), invalid_reward="none")
    assert none == [1.0, -0.5, None]
    data = DataProto.from_dict(tensors={"prompts": torch.ones(3, 2, dtype=torch.long),
                                        "responses": torch.ones(3, 2, dtype=torch.long),
                                        "attention_mask": torch.ones(3, 4, dtype=torch.long)})
    with pytest.raises(TypeError, match="NoneType"):
        NaiveRewardManager.assemble_rm_scores(data, none)
    with pytest.raises(ValueError, match="invalid_reward"):
        group_scores(InvalidClient(), invalid_reward="mean")


def test_rows_of_one_task_are_separate_groups():
    """verl's group is a row (uid): two rows of one task (two prompts for it) go as two
    requests when extra_info names the row, as verl's datasets and kernelgate's export do."""
    fake = FakeClient()

    async def group():
        return await asyncio.gather(*(compute_score("kernelgate/ci", s, "ci/1_add_relu", {"split": "train", "index": i},
                                                    client=fake, window_s=0.5) for s, i in (("a", 0), ("b", 1), ("c", 0))))

    asyncio.run(group())
    assert sorted(r["completions"] for r in fake.requests) == [["a", "c"], ["b"]], fake.requests


def test_deadline_s_goes_with_the_request():
    fake = FakeClient()
    asyncio.run(compute_score("kernelgate/ci", "a", "ci/1_add_relu", {"deadline_s": 30}, client=fake, window_s=0))
    assert fake.requests[0]["deadline_s"] == 30.0, fake.requests
