"""OpenRLHF 0.11.2's own remote-reward path against a live `kernelgate serve`.

Its SingleTurnAgentExecutor generates, decodes prompt + response with
skip_special_tokens=False (so the chat template's end-of-turn token follows the
closing fence), and posts {query, prompts, labels} to --remote_rm_url with aiohttp.
Here the tokenizer is built in the test (byte-level BPE with a Qwen-style chat
template) and the engine is scripted: it "generates" a fixed completion's tokens.
Everything between the two is OpenRLHF's code.
"""

import asyncio
import time
from types import SimpleNamespace

import pytest
from openrlhf.utils import agent as openrlhf_agent   # .venv-trainers has it (make test-e2e)

from conftest import REPO
from tiny_tokenizer import byte_bpe

TASK_ID = "ci/1_add_relu"
HONEST = (REPO / "datasets" / "solutions" / "ci" / "1_add_relu.py").read_text()
REFERENCE = (REPO / "datasets" / "ci" / "1_add_relu.py").read_text()
WRONG = HONEST.replace("tl.maximum(", "tl.minimum(")


def chat_tokenizer():
    """A byte-level BPE tokenizer (any text round-trips) with <|im_start|>/<|im_end|> as
    special tokens and a Qwen-style chat template, trained on a few lines here."""
    return byte_bpe([HONEST, REFERENCE, "```python\n", "Write ModelNew."],
                    ["<|im_start|>", "<|im_end|>", "<|endoftext|>"], eos="<|im_end|>", pad="<|endoftext|>",
                    chat_template="{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
                                  "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")


class ScriptedEngine:
    """Stands in for OpenRLHF's vLLM engine: every generate() returns `text`'s tokens."""

    def __init__(self, tokenizer, text):
        self.ids = tokenizer(text, add_special_tokens=False)["input_ids"]

    async def generate(self, prompt_token_ids, params, multi_modal_data=None):
        out = SimpleNamespace(token_ids=list(self.ids), finish_reason="stop", logprobs=None)
        return SimpleNamespace(outputs=[out])


@pytest.fixture(scope="module")
def gateway(tmp_path_factory):
    from conftest import Serve
    tmp = tmp_path_factory.mktemp("openrlhf")
    s = Serve(tmp / "data", tmp).start()
    yield s
    assert s.stop() == 0, s.log()


def rollout(url, response_text, label=TASK_ID):
    """One OpenRLHF rollout: its executor, its decode, its HTTP call."""
    tok = chat_tokenizer()
    prompt = tok.apply_chat_template(
        [{"role": "user", "content": f"Write ModelNew for:\n```python\n{REFERENCE}\n```"}],
        tokenize=False, add_generation_prompt=True)
    executor = openrlhf_agent.SingleTurnAgentExecutor(remote_rm_url=url)
    params = SimpleNamespace(max_tokens=4096, logprobs=None)
    engine = ScriptedEngine(tok, response_text + "<|im_end|>")
    return asyncio.run(executor.execute(prompt, label, params, 16384, tok, engine))


def test_the_tokenizer_puts_the_end_of_turn_token_right_after_the_fence():
    tok = chat_tokenizer()
    text = "```python\nx = 1\n```<|im_end|>"
    ids = tok(text, add_special_tokens=False)["input_ids"]
    assert tok.decode(ids, skip_special_tokens=False) == text
    assert tok.convert_tokens_to_ids("<|im_end|>") in ids


def test_an_honest_kernel_scores_above_zero_through_openrlhfs_own_call(gateway):
    out = rollout(gateway.url + "/openrlhf/reward", f"Here is the kernel.\n```python\n{HONEST}\n```")
    assert out["reward"] is not None, "OpenRLHF got no reward (its call failed; see the serve log)"
    assert out["reward"][0] > 0 and out["scores"][0] == 1.0, out
    logs = out["extra_logs"]   # what OpenRLHF averages into its step logs
    assert logs["valid"] == [1.0] and logs["status_correct"] == [1.0] and logs["correct"] == [1.0], logs
    assert logs["status_compile_error"] == [0.0], logs


def test_a_wrong_kernel_scores_below_the_honest_one(gateway):
    honest = rollout(gateway.url + "/openrlhf/reward?reward_fn=binary", f"```python\n{HONEST}\n```")
    wrong = rollout(gateway.url + "/openrlhf/reward?reward_fn=binary", f"```python\n{WRONG}\n```")
    assert honest["reward"] == [1.0] and wrong["reward"] == [0.0], (honest, wrong)


def test_an_unknown_label_fails_clearly_not_silently(gateway):
    t0 = time.monotonic()
    out = rollout(gateway.url + "/openrlhf/reward", f"```python\n{HONEST}\n```", label="no/such_task")
    # The gateway answers 4xx; OpenRLHF retries 5 times, 1 s apart, then logs and leaves the
    # reward None: a sample it never scored, not a zero it would train on.
    assert out["reward"] is None, out
    assert time.monotonic() - t0 < 30
