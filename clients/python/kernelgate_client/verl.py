"""verl (0.9.x) custom reward function:

    reward.custom_reward_function.path=clients/python/kernelgate_client/verl.py   (or pkg://kernelgate_client.verl)
    reward.custom_reward_function.name=compute_score

ground_truth is the task: a registered task id or the reference source. extra_info
may carry "reward_fn", "options", "deadline_s" and "invalid_reward", and "prompt" (a
string or chat messages: the gateway logs it with the evaluation; kernelgate's verl
export puts it there); reward_kwargs may set reward_fn, options, deadline_s,
invalid_reward, url, group_size and window_s for every sample.

verl 0.9 has no batched reward API any more: its reward loop hands the reward
manager one sample at a time (RewardLoopWorker.run_single, streamed from the agent
loop as each rollout ends), and the old BatchRewardManager cannot be built by
load_reward_manager. compute_score is therefore async, which verl's reward managers
await in their event loop instead of parking a thread per sample, and it coalesces:
samples of one group that arrive within window_s of the first (or once group_size of
them are in) go to the gateway as one POST /v1/rewards, so a GRPO group is one batch.
A group is the samples of one task, reward_fn, options, deadline_s and client, and of
one dataset row when extra_info has "index" (verl's own preprocessing and kernelgate's
export put it there): verl's uid, one per row and step, in the common case.

Invalid samples (valid false: a harness or task error, a deadline_s that stopped the
item: not the model's doing) cannot be left out of verl 0.9.1's reward tensor, so by
default (invalid_reward "neutral") one scores the mean of the valid rewards in its
POST: its group's mean, so verl's GRPO advantage (score minus the uid group's mean)
is 0 for it; 0.0 when none of the POST is valid (all equal: zero advantage anyway).
"zero" scores it 0.0, which the reward function may rank above honest failures
(kernelgym_tiered: -0.5 for a compile error). "none" returns a score of None, which
verl 0.9.1's own reward managers cannot take (the agent loop then builds no rm_scores
and RewardLoopManager.compute_rm_score's assemble_rm_scores raises TypeError): only
for a reward manager of your own that masks None. A group split across POSTs (window_s
ran out before group_size samples were in) gets each POST's mean: set group_size to
actor_rollout_ref.rollout.n and keep reward.num_workers=1 (the agent loop sends each
sample to a random reward worker).

It returns verl's dict form; every key but "score" lands in reward_extra_info (and,
numbers only, in verl's validation metrics):
    score      the reward; for an invalid sample, as invalid_reward says
    status     the verdict's status (correct, incorrect, compile_error, ...)
    correct    1.0 or 0.0
    speedup    the verdict's speedup, None where it was not timed
    valid      0.0 where the reward is not the model's doing (a harness or task error)
    latency_s  seconds from this call to the gateway's answer, coalescing included
"""

import asyncio
import json
import sys
import time
import weakref
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

if __package__:
    from .client import Client, log_prompt, task_fields
else:
    # verl loads a custom_reward_function.path by file location, outside any package,
    # where relative imports fail; import the package this file lives in instead.
    _root = str(Path(__file__).resolve().parents[1])
    if _root not in sys.path:
        sys.path.insert(0, _root)
    from kernelgate_client.client import Client, log_prompt, task_fields

WINDOW_S = 2.0
MAX_IN_FLIGHT = 64  # group requests in flight per process; each holds a thread while it waits
INVALID_REWARDS = ("neutral", "zero", "none")

_clients = {}
_pool = None
_coalescers = weakref.WeakKeyDictionary()  # event loop -> _Coalescer


async def compute_score(data_source=None, solution_str=None, ground_truth=None, extra_info=None, *,
                        reward_fn=None, options=None, deadline_s=None, invalid_reward="neutral", url=None,
                        group_size=None, window_s=WINDOW_S, client=None, **_):
    """One sample's reward as verl's dict (module doc). Unknown keyword arguments
    (verl's reward_router_address, ...) are ignored."""
    start = time.monotonic()
    info = _plain(extra_info)
    info = info if isinstance(info, dict) else {}
    invalid = info.get("invalid_reward") or invalid_reward
    if invalid not in INVALID_REWARDS:
        raise ValueError(f"kernelgate compute_score: invalid_reward {invalid!r}: want one of {', '.join(INVALID_REWARDS)}")
    deadline = info.get("deadline_s") or _plain(deadline_s)
    row = json.dumps([info.get("split"), info.get("index")], default=str) if info.get("index") is not None else None
    key = (_task(ground_truth), info.get("reward_fn") or reward_fn,
           json.dumps(info.get("options") or _plain(options), sort_keys=True),
           float(deadline) if deadline is not None else None, row, client or _client(url))
    loop = asyncio.get_running_loop()
    coalescer = _coalescers.get(loop)
    if coalescer is None:
        coalescer = _coalescers[loop] = _Coalescer(loop)
    resp, i = await coalescer.add(key, str(solution_str or ""), log_prompt(_plain(info.get("prompt"))), group_size, float(window_s))
    return _sample(resp, i, invalid, time.monotonic() - start)


def compute_score_sync(data_source=None, solution_str=None, ground_truth=None, extra_info=None, **kwargs):
    """compute_score for callers that cannot await (verl's RemoteRewardManager, scripts):
    one request per call, nothing coalesced."""
    return asyncio.run(compute_score(data_source, solution_str, ground_truth, extra_info,
                                     **{**kwargs, "window_s": 0.0}))


def _task(ground_truth):
    """The task as a string; verl may hand over a numpy string or a 0-d object array."""
    task = _plain(ground_truth)
    if not isinstance(task, str) or not task.strip():
        raise ValueError(f"kernelgate compute_score: ground_truth must be a task id or reference "
                         f"source, got {type(ground_truth).__name__}")
    return task


class _Coalescer:
    """Samples waiting for their group, by (task, reward_fn, options, client); one per event loop."""

    def __init__(self, loop):
        self.loop, self.pending = loop, {}

    def add(self, key, solution, prompt, group_size, window_s):
        batch = self.pending.get(key)
        if batch is None:
            batch = self.pending[key] = {"solutions": [], "prompts": [], "futures": []}
            batch["timer"] = self.loop.call_later(window_s, self._flush, key, batch)
        fut = self.loop.create_future()
        batch["solutions"].append(solution)
        batch["prompts"].append(prompt)
        batch["futures"].append(fut)
        if group_size and len(batch["solutions"]) >= int(group_size):
            self._flush(key, batch)
        return fut

    def _flush(self, key, batch):
        if self.pending.get(key) is not batch:
            return  # already sent: group_size reached before the window ended
        del self.pending[key]
        batch["timer"].cancel()
        self.loop.create_task(self._send(key, batch))

    async def _send(self, key, batch):
        task, reward_fn, options, deadline_s, _, client = key
        futures = batch["futures"]
        # Prompts go along only when every sample has one (the gateway takes one per item or none).
        extra = {"prompts": batch["prompts"]} if all(p is not None for p in batch["prompts"]) else {}
        if deadline_s is not None:
            extra["deadline_s"] = deadline_s
        try:
            resp = await self.loop.run_in_executor(_executor(), lambda: client.rewards(
                completions=batch["solutions"], reward_fn=reward_fn, options=json.loads(options),
                **task_fields(task), **extra))
        except Exception as e:  # every sample of the group fails with the request's error
            for f in futures:
                if not f.done():
                    f.set_exception(e)
            return
        for i, f in enumerate(futures):
            if not f.done():  # a caller cancelled (its rollout was aborted)
                f.set_result((resp, i))


def _sample(resp, i, invalid_reward, latency_s):
    rewards = resp["rewards"]
    valid = [r is not None and v is not False for r, v in zip(rewards, resp.get("valid") or [True] * len(rewards))]
    verdict = (resp.get("results") or [None] * (i + 1))[i] or {}
    speedup = verdict.get("speedup")
    if valid[i]:
        score = float(rewards[i])
    elif invalid_reward == "neutral":
        score = _mean([float(r) for r, ok in zip(rewards, valid) if ok])
    else:
        score = 0.0 if invalid_reward == "zero" else None
    return {"score": score,
            "status": str(verdict.get("status") or "none"),
            "correct": 1.0 if verdict.get("correct") else 0.0,
            "speedup": float(speedup) if speedup is not None else None,
            "valid": 1.0 if valid[i] else 0.0,
            "latency_s": round(latency_s, 3)}


def _mean(xs):
    """The valid rewards' mean: the score that leaves a sample's GRPO advantage at 0."""
    return sum(xs) / len(xs) if xs else 0.0


def _client(url):
    if url not in _clients:
        _clients[url] = Client(url)
    return _clients[url]


def _executor():
    global _pool
    if _pool is None:
        _pool = ThreadPoolExecutor(max_workers=MAX_IN_FLIGHT, thread_name_prefix="kernelgate-verl")
    return _pool


def _plain(x):
    """Numpy values (verl's non_tensor_batch holds object arrays) and omegaconf
    containers (reward_kwargs) as plain Python, for JSON and for truth tests: arrays
    to lists, 0-d arrays and numpy scalars to items."""
    if isinstance(x, Mapping):
        return {str(k): _plain(v) for k, v in x.items()}
    if isinstance(x, Sequence) and not isinstance(x, (str, bytes)):
        return [_plain(v) for v in x]
    if type(x).__module__ == "numpy":
        if getattr(x, "ndim", 0) == 0 and hasattr(x, "item"):
            return _plain(x.item())
        return _plain(x.tolist())
    return x
