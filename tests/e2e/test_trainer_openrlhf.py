"""OpenRLHF 0.11.2's own remote-reward path against a live `kernelgate serve`.

Its SingleTurnAgentExecutor generates, decodes prompt + response with
skip_special_tokens=False (so the chat template's end-of-turn token follows the
closing fence), and posts {query, prompts, labels} to --reward.remote_url with aiohttp,
one sample per request. Here the tokenizer is built in the test (byte-level BPE with a
Qwen-style chat template) and the engine is scripted: it "generates" a fixed
completion's tokens. Everything between the two is OpenRLHF's code.

OpenRLHF's training modules import vLLM, DeepSpeed and PEFT, a GPU stack this machine
lacks, though the code run here (the per-prompt fan-out, experiences, advantages) never
touches it: that part runs in a child process (this file as a script) where those
packages are stubs that raise if anything uses them. Its argument parser is built by
the statements of train_ppo_ray's __main__ block that make it (the module imports the
same stack).
"""

import argparse
import ast
import asyncio
import importlib.abc
import importlib.machinery
import importlib.util
import json
import re
import shlex
import subprocess
import sys
import time
import types
from datetime import datetime
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import parse_qs, urlsplit

import pytest
from openrlhf.utils import agent as openrlhf_agent   # .venv-trainers has it (make test-e2e)
from openrlhf.utils.config import hierarchize

from conftest import REPO
from tiny_tokenizer import byte_bpe

TASK_ID = "ci/1_add_relu"
HONEST = (REPO / "datasets" / "solutions" / "ci" / "1_add_relu.py").read_text()
REFERENCE = (REPO / "datasets" / "ci" / "1_add_relu.py").read_text()
WRONG = HONEST.replace("tl.maximum(", "tl.minimum(")
# An honest kernel whose forward sleeps: the request's deadline_s stops it, a harness
# error (valid false) that is not the model's doing.
SLOW = HONEST + ("\nimport time as _t\n_f = ModelNew.forward\n"
                 "ModelNew.forward = lambda self, *a: (_t.sleep(600), _f(self, *a))[1]\n")
DEADLINE_S = 25
# The advantage estimators that compare a sample with its prompt's group.
GROUP_ESTIMATORS = ("group_norm", "rloo", "dr_grpo")


def chat_tokenizer():
    """A byte-level BPE tokenizer (any text round-trips) with <|im_start|>/<|im_end|> as
    special tokens and a Qwen-style chat template, trained on a few lines here."""
    return byte_bpe([HONEST, REFERENCE, "```python\n", "Write ModelNew."],
                    ["<|im_start|>", "<|im_end|>", "<|endoftext|>"], eos="<|im_end|>", pad="<|endoftext|>",
                    chat_template="{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
                                  "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")


class ScriptedEngine:
    """Stands in for OpenRLHF's vLLM engine: every generate() returns `text`'s tokens, or,
    given several texts, the next one's."""

    def __init__(self, tokenizer, *texts):
        self.ids = [tokenizer(t, add_special_tokens=False)["input_ids"] for t in texts]
        self.calls = 0

    async def generate(self, prompt_token_ids, params, multi_modal_data=None):
        ids = self.ids[min(self.calls, len(self.ids) - 1)]
        self.calls += 1
        out = SimpleNamespace(token_ids=list(ids), finish_reason="stop", logprobs=None)
        return SimpleNamespace(outputs=[out])


def chat_prompt(tok):
    return tok.apply_chat_template([{"role": "user", "content": f"Write ModelNew for:\n```python\n{REFERENCE}\n```"}],
                                   tokenize=False, add_generation_prompt=True)


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
    prompt = chat_prompt(tok)
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


def openrlhf_parser():
    """OpenRLHF's own argument parser: the statements of train_ppo_ray's __main__ block up
    to `args = parser.parse_args()`, run as written."""
    path = Path(importlib.util.find_spec("openrlhf").submodule_search_locations[0]) / "cli" / "train_ppo_ray.py"
    tree = ast.parse(path.read_text())
    main = next(n for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "__name__ == '__main__'")
    end = next(i for i, st in enumerate(main.body) if ast.unparse(st) == "args = parser.parse_args()")
    scope = {"argparse": argparse, "datetime": datetime}
    exec(compile(ast.Module(body=main.body[:end], type_ignores=[]), str(path), "exec"), scope)
    return scope["parser"]


def parse_openrlhf(argv):
    """argv as train_ppo_ray reads it: its parser, then its hierarchize (args.reward.remote_url)."""
    return hierarchize(openrlhf_parser().parse_args(argv))


def readme_openrlhf_argv():
    """The README's `python -m openrlhf.cli.train_ppo_ray ...` line, split as a shell would,
    without the command itself."""
    text = (REPO / "README.md").read_text().replace("\\\n", " ")
    lines = [ln for ln in text.splitlines() if re.match(r"\s*python3? -m openrlhf\.cli\.train_ppo_ray\s", ln)]
    assert len(lines) == 1, f"want one OpenRLHF command line in README.md, found {len(lines)}"
    argv = shlex.split(lines[0], comments=True)
    return argv[argv.index("openrlhf.cli.train_ppo_ray") + 1:]


def test_the_readmes_openrlhf_command_parses_and_its_url_is_served(gateway, capsys):
    """The README's OpenRLHF flags are OpenRLHF's (the old --remote_rm_url and --label_key
    are not), its URL names this endpoint with a group as large as the command's, and the
    gateway takes the URL as written (host aside) for a whole group."""
    parser = openrlhf_parser()
    for old in (["--remote_rm_url", "http://h/openrlhf/reward"], ["--label_key", "task_id"]):
        with pytest.raises(SystemExit):
            parser.parse_args(old)
        assert "unrecognized arguments" in capsys.readouterr().err
    args = parse_openrlhf(readme_openrlhf_argv())
    assert args.data.label_key == "task_id" and args.data.input_key == "prompt" and args.data.apply_chat_template
    assert args.algo.advantage.estimator in GROUP_ESTIMATORS, args.algo.advantage.estimator
    url = urlsplit(args.reward.remote_url)
    query = parse_qs(url.query)
    assert url.path == "/openrlhf/reward", args.reward.remote_url
    assert int(query["group_size"][0]) == args.rollout.n_samples_per_prompt, query
    assert float(query["deadline_s"][0]) < 180, "over OpenRLHF's client timeout (agent.py: aiohttp total=180)"

    n = args.rollout.n_samples_per_prompt
    status, resp = gateway.post(f"{url.path}?{url.query}", {
        "query": [f"P```python\n{HONEST}\n```"] * n, "prompts": ["P"] * n, "labels": [TASK_ID] * n})
    assert status == 200 and resp["extra_logs"]["valid"] == [1.0] * n and resp["scores"] == [1.0] * n, resp


def test_the_readmes_openrlhf_data_flags_read_the_verl_export(gateway, tmp_path, monkeypatch):
    """--data.prompt_dataset out/verl/train.parquet (the export the README makes),
    --data.input_key, --data.apply_chat_template and --data.label_key through OpenRLHF's own
    blending_datasets and PromptDataset: each prompt comes with its task id as label."""
    from openrlhf.datasets import PromptDataset
    from openrlhf.datasets.utils import blending_datasets

    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    status, m = gateway.post("/v1/exports", {"format": "verl", "task": [TASK_ID], "test_fraction": 0})
    assert status == 201, m
    argv = readme_openrlhf_argv()
    argv[argv.index("--data.prompt_dataset") + 1] = str(gateway.data / "exports" / m["export_id"] / "train.parquet")
    args = parse_openrlhf(argv)
    strategy = SimpleNamespace(args=args, print=lambda *a: None, is_rank_0=lambda: True)
    data = blending_datasets(args.data.prompt_dataset, None, strategy)
    ds = PromptDataset(data, chat_tokenizer(), strategy)
    assert ds.labels == [TASK_ID], ds.labels
    assert ds.prompts[0].startswith("<|im_start|>user\n") and "class Model" in ds.prompts[0], ds.prompts[0][:200]


def test_an_invalid_sample_gets_zero_advantage_in_openrlhfs_own_pipeline(gateway, tmp_path):
    """One prompt, 3 samples, through OpenRLHF's own code end to end (in a child process:
    module doc): its rollout actor's generate_responses fans the prompt out (each sample
    its own POST), SamplesGenerator turns each answer into an Experience, and
    RemoteExperienceMaker computes rewards' advantages. The samples: an honest kernel, prose,
    and a kernel the request's deadline_s stops (harness_error, valid 0). The gateway
    gathers the group (group_size=3) and gives the invalid sample the valid ones' mean
    reward and score, so its advantage is 0 under every group estimator and dynamic
    filtering's average is the valid samples'. Under kernelgym_tiered its 0 would have
    outranked the prose's -0.5."""
    chat_tokenizer().save_pretrained(tmp_path / "tok")
    url = f"{gateway.url}/openrlhf/reward?reward_fn=kernelgym_tiered&group_size=3&deadline_s={DEADLINE_S}"
    p = subprocess.run([sys.executable, __file__, str(tmp_path / "tok"), url], capture_output=True, text=True,
                       timeout=DEADLINE_S + 240, cwd=tmp_path)
    assert p.returncode == 0, p.stderr[-4000:]
    out = json.loads(p.stdout.splitlines()[-1])
    samples = {s["status"]: s for s in out["samples"]}
    assert set(samples) == {"correct", "invalid_submission", "harness_error"}, out
    honest, prose, stopped = samples["correct"], samples["invalid_submission"], samples["harness_error"]
    assert (honest["valid"], prose["valid"], stopped["valid"]) == (1, 1, 0), out
    assert (honest["reward"], prose["reward"]) == pytest.approx((0.2, -0.5)), out
    assert stopped["reward"] == pytest.approx(-0.15) and stopped["score"] == pytest.approx(0.5), out
    assert out["dynamic_filtering_avg"] == pytest.approx(0.5), out
    for est in GROUP_ESTIMATORS:  # [min, max] over each sample's response tokens
        assert max(map(abs, stopped["advantage"][est])) < 1e-5, (est, out)
        assert honest["advantage"][est][0] > 0.1 and prose["advantage"][est][1] < -0.1, (est, out)
        assert stopped["advantage_if_zero"][est][0] > 0.1, (est, out)  # 0 would train it as a good answer


# The child process: OpenRLHF's training-side code over stubs of the GPU stack.

GPU_STACK = {"vllm", "deepspeed", "peft", "torchdata", "flash_attn", "bitsandbytes"}


class _Absent:
    def __init__(self, *a, **k):
        raise RuntimeError(f"{type(self).__module__}.{type(self).__qualname__} is a stub: the GPU stack was used")


class _StubModule(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        stub = type(name, (_Absent,), {"__module__": self.__name__})
        setattr(self, name, stub)
        return stub


class _StubFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in GPU_STACK:
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
        return None

    def create_module(self, spec):
        m = _StubModule(spec.name)
        m.__path__ = []
        return m

    def exec_module(self, module):
        pass


def child(tok_dir, url):
    """Prints one JSON line: per sample its status, valid, reward, score and advantage
    per group estimator; and dynamic filtering's average score."""
    sys.meta_path.insert(0, _StubFinder())
    import torch
    from openrlhf.trainer.ppo_utils.experience_maker import RemoteExperienceMaker
    from openrlhf.trainer.ppo_utils.samples_generator import SamplesGenerator
    from openrlhf.trainer.ray.vllm_engine import RolloutRayActor
    from transformers import PreTrainedTokenizerFast

    tok = PreTrainedTokenizerFast.from_pretrained(tok_dir)
    texts = [f"```python\n{HONEST}\n```", "I cannot write this kernel.", f"```python\n{SLOW}\n```"]
    # The rollout actor without its vLLM engine: generate_responses is OpenRLHF's, the
    # engine it calls back (self.generate) is scripted.
    actor = object.__new__(RolloutRayActor.__ray_actor_class__)
    actor.executor = openrlhf_agent.SingleTurnAgentExecutor(url)
    actor.generate = ScriptedEngine(tok, *(t + "<|im_end|>" for t in texts)).generate
    params = SimpleNamespace(max_tokens=4096, logprobs=None)
    responses = asyncio.run(actor.generate_responses(chat_prompt(tok), TASK_ID, params, 16384, tok, num_samples=3))
    assert all(r["reward"] is not None for r in responses), [r["extra_logs"] for r in responses]
    gen = object.__new__(SamplesGenerator)
    samples = [{"status": next(k[len("status_"):] for k, v in r["extra_logs"].items() if k.startswith("status_") and v == [1.0]),
                "valid": r["extra_logs"]["valid"][0], "reward": r["reward"][0], "score": r["scores"][0], "advantage": {}}
               for r in responses]
    experiences = [gen._process_response_into_experience(r, max_len=16384) for r in responses]
    scores = [e.scores[0].item() for e in experiences]   # what _generate_vllm's dynamic filtering averages

    def advantages(est, responses):
        """[min, max] of each sample's advantage over its response tokens, by OpenRLHF's maker."""
        args = parse_openrlhf(["--rollout.n_samples_per_prompt", "3", "--algo.advantage.estimator", est])
        maker = object.__new__(RemoteExperienceMaker)
        maker.strategy, maker.args, maker.advantage_estimator = SimpleNamespace(args=args), args, est
        maker.kl_ctl, maker.tokenizer = SimpleNamespace(value=0.0), tok
        exps = maker.split_rollout_samples([gen._process_response_into_experience(r, max_len=16384) for r in responses])
        for e in exps:  # make_experience's kl without a reference model
            e.kl = torch.zeros_like(e.action_mask, dtype=torch.float32)
        out = [None] * len(responses)
        for e in maker.compute_advantages_and_returns(exps):
            adv = e.advantages[e.action_mask.bool()]
            out[e.index[0]] = [adv.min().item(), adv.max().item()]
        return out

    # What a reward of 0 for the invalid sample (invalid_reward=zero, the old answer) would train.
    zeroed = [dict(r, reward=[0.0]) if r["extra_logs"]["valid"] == [0.0] else r for r in responses]
    for est in GROUP_ESTIMATORS:
        for s, adv, adv0 in zip(samples, advantages(est, responses), advantages(est, zeroed)):
            s["advantage"][est], s.setdefault("advantage_if_zero", {})[est] = adv, adv0
    print(json.dumps({"samples": samples, "dynamic_filtering_avg": sum(scores) / len(scores)}))


if __name__ == "__main__":
    child(*sys.argv[1:])
