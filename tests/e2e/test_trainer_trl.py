"""kernelgate's TRL reward functions inside TRL's own GRPOTrainer, against a live gateway.

Runs under .venv-trainers (trl 1.16; make test-e2e). Nothing comes from the Hugging
Face hub: the model is a randomly initialised one-layer Qwen2 and the tokenizer a
byte-level BPE trained here. The random model writes nonsense, so the tests that need
kernels script them: through TRL's rollout_func (a whole training step), or straight
into `_calculate_rewards`, the method GRPOTrainer calls reward functions from in every
batch. That method and `_pending_metrics` are TRL 1.16 internals, pinned on purpose.
"""

import inspect
import re
import sys
import time

import pytest
import torch
from datasets import Dataset
from transformers import Qwen2Config, Qwen2ForCausalLM
from trl import GRPOConfig, GRPOTrainer

from conftest import REPO, Serve
from tiny_tokenizer import byte_bpe

sys.path.insert(0, str(REPO / "clients" / "python"))

from kernelgate_client import Client  # noqa: E402
from kernelgate_client.trl import async_reward_function, batch_metrics, reward_function  # noqa: E402

ADD = (REPO / "datasets" / "ci" / "1_add_relu.py").read_text()
ADD_OK = (REPO / "datasets" / "solutions" / "ci" / "1_add_relu.py").read_text()
# Compiles and runs; every output is 0, so it is wrong wherever x + y > 0.
ADD_WRONG = ADD_OK.replace("tl.maximum(x + y, 0.0)", "x * 0.0")
# forward never returns: only the harness's timeout_s ends it.
ADD_HANG = ADD_OK.replace("        x = x.contiguous()\n", "        while True:\n            pass\n")
# The reference itself fails: a task error, not the model's doing.
ADD_BROKEN = ADD.replace("return torch.relu(x + y)", "raise RuntimeError('reference broke')")
PROMPT = [{"role": "user", "content": "write a triton kernel for relu of x plus y"}]
CHAT_TEMPLATE = ("{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}<eos>\n{% endfor %}"
                 "{% if add_generation_prompt %}assistant: {% endif %}")
TIMEOUT_S = 3  # Options.timeout_s (minimum 1); the honest kernel needs about 1 s on CPU


def fenced(code):
    return f"Here is my kernel.\n```python\n{code}\n```\n"


@pytest.fixture(scope="module")
def gateway(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("trl")
    s = Serve(tmp / "data", tmp).start()
    yield s
    assert s.stop() == 0, s.log()


def tiny_tokenizer():
    """Byte-level BPE (any text round-trips) trained here on the task's own sources, so
    a kernel is a few hundred tokens. No backtick pair is ever merged, so the random
    model's 8 tokens never open a code fence."""
    return byte_bpe([ADD, ADD_OK], ["<pad>", "<eos>"], eos="<eos>", pad="<pad>", chat_template=CHAT_TEMPLATE)


def tiny_trainer(tmp_path, reward_funcs, rollout_func=None):
    """GRPO on a one-layer model: 2 steps, each one prompt with 2 completions."""
    torch.manual_seed(0)
    tokenizer = tiny_tokenizer()
    model = Qwen2ForCausalLM(Qwen2Config(
        vocab_size=len(tokenizer), hidden_size=16, intermediate_size=32, num_hidden_layers=1,
        num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=1024,
        pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id))
    args = GRPOConfig(output_dir=str(tmp_path / "out"), max_steps=2, per_device_train_batch_size=2,
                      num_generations=2, max_completion_length=512 if rollout_func else 8,
                      logging_steps=1, learning_rate=1e-3, report_to="none", use_cpu=True,
                      save_strategy="no", disable_tqdm=True)
    data = Dataset.from_dict({"prompt": [PROMPT] * 4, "task": [ADD] * 4})
    return GRPOTrainer(model=model, reward_funcs=reward_funcs, args=args, train_dataset=data,
                       processing_class=tokenizer, rollout_func=rollout_func)


def scripted_rollout(texts):
    """A TRL rollout_func that "generates" texts[i % len(texts)] for the i-th prompt."""
    def rollout(prompts, trainer):
        tok = trainer.processing_class
        prompt_ids = [tok.apply_chat_template(p, add_generation_prompt=True, tokenize=True, return_dict=True)
                      ["input_ids"] for p in prompts]
        completion_ids = [tok(texts[i % len(texts)], add_special_tokens=False)["input_ids"] + [tok.eos_token_id]
                          for i in range(len(prompts))]
        return {"prompt_ids": prompt_ids, "completion_ids": completion_ids, "logprobs": None}
    return rollout


def rewards_posted(gateway):
    """POST /v1/rewards answered so far, by the gateway's own count (GET /metrics)."""
    status, body = gateway.get("/metrics")
    assert status == 200
    text = body.decode() if isinstance(body, bytes) else str(body)
    return sum(float(m.group(1)) for m in re.finditer(
        r'^kernelgate_http_requests_total\{[^}]*method="POST",route="/v1/rewards"[^}]*\} (\S+)$', text, re.M))


@pytest.mark.parametrize("make", [reward_function, async_reward_function], ids=["sync", "async"])
def test_grpo_trains_two_steps_on_kernelgate_rewards(gateway, tmp_path, make):
    fn = make(Client(gateway.url, timeout_s=120), reward_fn="binary", options={"timeout_s": TIMEOUT_S})
    assert inspect.iscoroutinefunction(fn) == (make is async_reward_function)
    trainer = tiny_trainer(tmp_path, [fn])
    before = rewards_posted(gateway)
    trainer.train()
    assert trainer.state.global_step == 2
    # One task per generation batch: one batch per step reached the gateway.
    assert rewards_posted(gateway) - before == 2
    steps = [h for h in trainer.state.log_history if "kernelgate/correct" in h]
    assert len(steps) == 2, trainer.state.log_history
    for h in steps:
        counts = {k: v for k, v in h.items() if k.startswith("kernelgate/") and k != "kernelgate/invalid"}
        # Each step judged its two completions. A random model writes no code block:
        # invalid_submission, which binary scores 0 (the model's fault, so still valid).
        assert sum(counts.values()) == 2 and h["kernelgate/invalid_submission"] == 2, h
        assert h["kernelgate/invalid"] == 0 and h["rewards/kernelgate_binary/mean"] == 0.0, h
    # CPU mode times nothing, so no speedup is logged rather than a made-up one
    assert not any("kernelgate/speedup_correct" in h for h in trainer.state.log_history)


def test_grpo_step_ranks_an_honest_kernel_over_a_wrong_one(gateway, tmp_path, monkeypatch):
    """Scripted generation (TRL's rollout_func), everything after it TRL's: decode,
    kernelgate's reward, group advantages, loss."""
    monkeypatch.setenv("TRL_EXPERIMENTAL_SILENCE", "1")  # rollout_func is experimental in TRL 1.16
    fn = reward_function(Client(gateway.url, timeout_s=120), reward_fn="binary", options={"timeout_s": TIMEOUT_S})
    trainer = tiny_trainer(tmp_path, [fn], scripted_rollout([fenced(ADD_OK), fenced(ADD_WRONG)]))
    trainer.train()
    steps = [h for h in trainer.state.log_history if "kernelgate/correct" in h]
    assert trainer.state.global_step == 2 and len(steps) == 2
    for h in steps:
        assert (h["kernelgate/correct"], h["kernelgate/incorrect"]) == (1.0, 1.0), h
        # binary: 1 and 0 in one group, so the group has spread and the step a gradient
        assert h["reward"] == 0.5 and h["frac_reward_zero_std"] == 0.0, h
        assert h["grad_norm"] > 0.0, h


def test_trl_reward_path_scores_honest_wrong_hanging_and_broken_task(gateway, tmp_path):
    """Scripted completions into GRPOTrainer._calculate_rewards, with the sync and the
    async function side by side; two tasks in the batch, so two concurrent requests each."""
    client = Client(gateway.url, timeout_s=120)
    kw = dict(reward_fn="binary", options={"timeout_s": TIMEOUT_S})
    trainer = tiny_trainer(tmp_path, [reward_function(client, **kw), async_reward_function(client, **kw)])
    codes = [ADD_OK, ADD_WRONG, ADD_HANG, ADD_OK]
    tasks = [ADD, ADD, ADD, ADD_BROKEN]
    inputs = [{"prompt": PROMPT, "task": t} for t in tasks]
    completions = [[{"role": "assistant", "content": fenced(c)}] for c in codes]
    start = time.monotonic()
    rewards = trainer._calculate_rewards(inputs, [PROMPT] * 4, completions, [[1, 2]] * 4)
    elapsed = time.monotonic() - start
    # columns: the sync function, the async one; the task error is NaN (None), left out of the loss
    assert rewards.shape == (4, 2)
    for col in (0, 1):
        honest, wrong, hanging, broken = rewards[:, col].tolist()
        assert honest == 1.0 and wrong == 0.0 and honest > wrong
        assert hanging == 0.0  # binary scores a timeout as a failed kernel: 0
        assert broken != broken, rewards  # NaN
    # timeout_s cut the hanging kernel off, once per function (a timeout is not cached);
    # under the default timeout_s (120 s) this call would take minutes
    assert elapsed < 60, elapsed
    pending = trainer._pending_metrics
    assert pending["kernelgate/correct"] == [1.0, 1.0]
    assert pending["kernelgate/incorrect"] == [1.0, 1.0]
    assert pending["kernelgate/timeout"] == [1.0, 1.0]
    assert pending["kernelgate/invalid"] == [1.0, 1.0]


def test_batch_metrics_mean_speedup_of_correct_verdicts_only():
    batches = [{"results": [{"status": "correct", "speedup": 2.0}, {"status": "correct", "speedup": None},
                            {"status": "incorrect", "speedup": 9.0}],
                "valid": [True, True, True]},
               {"results": [{"status": "correct", "speedup": 4.0}, {"status": "harness_error", "speedup": None}],
                "valid": [True, False]}]
    m = batch_metrics(batches)
    assert m["kernelgate/speedup_correct"] == 3.0
    assert (m["kernelgate/correct"], m["kernelgate/incorrect"], m["kernelgate/harness_error"]) == (3.0, 1.0, 1.0)
    assert m["kernelgate/invalid"] == 1.0 and m["kernelgate/timeout"] == 0.0
