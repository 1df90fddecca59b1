"""verl (0.9.x) custom reward function:

    reward.custom_reward_function.path=clients/python/kernelgate_client/verl.py   (or pkg://kernelgate_client.verl)
    reward.custom_reward_function.name=compute_score

ground_truth is the task: a registered task id or the reference source. extra_info
may carry "reward_fn" and "options", and "prompt" (a string or chat messages: the
gateway logs it with the evaluation; kernelgate's verl export puts it there);
reward_kwargs may set reward_fn, options, url, group_size and window_s for every sample.

verl 0.9 has no batched reward API any more: its reward loop hands the reward
manager one sample at a time (RewardLoopWorker.run_single, streamed from the agent
loop as each rollout ends), and the old BatchRewardManager cannot be built by
load_reward_manager. compute_score is therefore async, which verl's reward managers
await in their event loop instead of parking a thread per sample, and it coalesces:
samples of one task that arrive within window_s of the first (or once group_size of
them are in) go to the gateway as one POST /v1/rewards, so a GRPO group is one batch.

It returns verl's dict form; every key but "score" lands in reward_extra_info (and,
numbers only, in verl's validation metrics):
    score      the reward (0.0 where the gateway gives none)
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

_clients = {}
_pool = None
_coalescers = weakref.WeakKeyDictionary()  # event loop -> _Coalescer


async def compute_score(data_source=None, solution_str=None, ground_truth=None, extra_info=None, *,
                        reward_fn=None, options=None, url=None, group_size=None, window_s=WINDOW_S,
                        client=None, **_):
    """One sample's reward as verl's dict (module doc). Unknown keyword arguments
    (verl's reward_router_address, ...) are ignored."""
    start = time.monotonic()
    info = _plain(extra_info)
    info = info if isinstance(info, dict) else {}
    key = (_task(ground_truth), info.get("reward_fn") or reward_fn,
           json.dumps(info.get("options") or _plain(options), sort_keys=True), client or _client(url))
    loop = asyncio.get_running_loop()
    coalescer = _coalescers.get(loop)
    if coalescer is None:
        coalescer = _coalescers[loop] = _Coalescer(loop)
    resp, i = await coalescer.add(key, str(solution_str or ""), log_prompt(_plain(info.get("prompt"))), group_size, float(window_s))
    return _sample(resp, i, time.monotonic() - start)


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
        task, reward_fn, options, client = key
        futures = batch["futures"]
        # Prompts go along only when every sample has one (the gateway takes one per item or none).
        extra = {"prompts": batch["prompts"]} if all(p is not None for p in batch["prompts"]) else {}
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


def _sample(resp, i, latency_s):
    reward = resp["rewards"][i]
    verdict = (resp.get("results") or [None] * (i + 1))[i] or {}
    valid = (resp.get("valid") or [True] * (i + 1))[i]
    speedup = verdict.get("speedup")
    return {"score": float(reward) if reward is not None else 0.0,
            "status": str(verdict.get("status") or "none"),
            "correct": 1.0 if verdict.get("correct") else 0.0,
            "speedup": float(speedup) if speedup is not None else None,
            "valid": 0.0 if reward is None or valid is False else 1.0,
            "latency_s": round(latency_s, 3)}


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
