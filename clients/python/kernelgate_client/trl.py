"""TRL GRPO reward functions backed by kernelgate (written against TRL 1.16).

    from kernelgate_client import Client
    from kernelgate_client.trl import reward_function
    GRPOTrainer(model, reward_funcs=[reward_function(Client(url), reward_fn="binary")],
                train_dataset=ds)   # ds: a "prompt" column and a "task" column

How TRL calls it (GRPOTrainer._calculate_rewards): keywords only: `prompts`,
`completions` (strings; for a conversational dataset, lists of message dicts whose
assistant `content` is the text), `completion_ids`, every dataset column but
"prompt" as a list with one entry per completion (rows repeated num_generations
times), and `trainer_state`, `log_extra`, `log_metric`.

The task is the column named by task_column ("task"): a registered task id or the
reference source. Completions of one task go to the gateway as one batch (one
GRPO group), distinct tasks concurrently (rewards_by_group).

Invalid samples: a sample the gateway marks `valid: false` (a harness or task
error, not the model's doing) gets None. TRL turns it into NaN; a completion whose
every reward function gave NaN is left out of its group's mean and std and gets
advantage 0, so it neither teaches nor skews the baseline.

Metrics go through TRL's `log_metric(name, value)` keyword, which averages each
name over the calls of a logging step (and over processes) and puts it in
trainer.state.log_history beside `reward` and `kl`. Per call:
  kernelgate/<status>          verdicts with that status, for every status of the
                               closed enum (zeros too, so the average is over every call)
  kernelgate/invalid           samples the gateway marked invalid
  kernelgate/speedup_correct   mean speedup of the correct verdicts that carry one;
                               not logged when none does (CPU mode times nothing), so
                               the average never takes in a made-up 0
Called outside a trainer (no log_metric) it logs nothing.

A gateway failure raises KernelgateError: the step fails rather than learning from
rewards nobody measured.
"""

import asyncio
import math

from .client import Client, log_prompt, message_text, rewards_by_group

# Verdict.status in openapi.yaml: a closed enum.
STATUSES = ("correct", "incorrect", "compile_error", "runtime_error", "timeout",
            "resource_limit", "reward_hack", "invalid_submission", "harness_error")


def reward_function(client=None, reward_fn=None, options=None, task_column="task"):
    """A synchronous TRL reward function. reward_fn and options (openapi.yaml Options,
    e.g. {"timeout_s": 30}) go with every request; client defaults to Client()."""
    client = client or Client()

    def kernelgate_reward(prompts=None, completions=None, log_metric=None, **columns):
        return _rewards(client, reward_fn, options, task_column, prompts, completions, columns, log_metric)

    kernelgate_reward.__name__ = f"kernelgate_{reward_fn or 'adaexplore'}"
    return kernelgate_reward


def async_reward_function(client=None, reward_fn=None, options=None, task_column="task"):
    """reward_function as a coroutine function. TRL 1.16 runs async reward functions
    on its own event loop, gathered with the other async ones, so kernelgate's wait
    overlaps theirs (an LLM judge's, say). The HTTP client blocks, so the call runs in
    a worker thread and the loop stays free."""
    sync = reward_function(client, reward_fn, options, task_column)

    async def kernelgate_reward(prompts=None, completions=None, **kwargs):
        return await asyncio.to_thread(sync, prompts=prompts, completions=completions, **kwargs)

    kernelgate_reward.__name__ = sync.__name__
    return kernelgate_reward


def _rewards(client, reward_fn, options, task_column, prompts, completions, columns, log_metric):
    tasks = columns.get(task_column)
    if tasks is None:
        raise ValueError(f"kernelgate reward: the dataset needs a {task_column!r} column "
                         "(task id or reference source)")
    recorder = _Recorder(client)
    rewards, valid = rewards_by_group(recorder, [_text(c) for c in completions],
                                      [(t, reward_fn, options) for t in tasks],
                                      prompts=None if prompts is None else [_prompt(p) for p in prompts])
    if log_metric is not None:
        for name, value in batch_metrics(recorder.batches).items():
            log_metric(name, value)
    return [r if ok else None for r, ok in zip(rewards, valid)]


class _Recorder:
    """The client as rewards_by_group sees it, keeping each batch it answers so
    that the verdicts behind the rewards can be summed up. Appends from several
    threads at once are safe: list.append is atomic."""

    def __init__(self, client):
        self.client, self.batches = client, []

    def rewards(self, **kwargs):
        resp = self.client.rewards(**kwargs)
        self.batches.append(resp)
        return resp

    def __getattr__(self, name):
        # Anything else rewards_by_group may read (url, timeouts) is the client's own.
        return getattr(self.client, name)


def batch_metrics(batches):
    """{metric name: value} for the verdicts of some gateway batches (see the module doc)."""
    counts = dict.fromkeys(STATUSES, 0)
    invalid, speedups = 0, []
    for batch in batches:
        results = batch.get("results") or []
        valid = batch.get("valid") or [True] * len(results)
        for verdict, ok in zip(results, valid):
            invalid += ok is False
            if not verdict:
                continue
            status = verdict.get("status") or "unknown"
            counts[status] = counts.get(status, 0) + 1
            s = verdict.get("speedup")
            if status == "correct" and isinstance(s, (int, float)) and math.isfinite(s):
                speedups.append(float(s))
    metrics = {f"kernelgate/{s}": float(n) for s, n in counts.items()}
    metrics["kernelgate/invalid"] = float(invalid)
    if speedups:
        metrics["kernelgate/speedup_correct"] = sum(speedups) / len(speedups)
    return metrics


def _text(completion):
    """A plain completion, or the assistant's text in a conversational one."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, list):
        return "".join(message_text(m.get("content")) for m in completion if isinstance(m, dict)
                       and m.get("role", "assistant") == "assistant")
    raise TypeError(f"completion of type {type(completion).__name__}: want str or a list of messages")


def _prompt(prompt):
    """One prompt for the request: every item needs one, so what log_prompt cannot read
    goes as text."""
    if isinstance(prompt, (str, list, tuple)):
        return log_prompt(prompt) or ""
    return str(prompt)
