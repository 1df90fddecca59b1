"""verl custom reward function: `custom_reward_function.path` = this file,
`custom_reward_function.name` = compute_score.

ground_truth is the task: a registered task id or the reference source. extra_info
may carry "reward_fn" and "options". Called with single values (verl's
NaiveRewardManager) it returns a float; called with lists (BatchRewardManager) it
returns a list, sending one request per task so a GRPO group is one batch.
"""

from .client import Client, task_fields

_client = None


def _get_client():
    global _client
    if _client is None:
        _client = Client()
    return _client


def compute_score(data_source=None, solution_str=None, ground_truth=None, extra_info=None, *,
                  data_sources=None, solution_strs=None, ground_truths=None, extra_infos=None,
                  client=None, **_):
    client = client or _get_client()
    if solution_strs is not None:          # batched call
        return _batch(client, solution_strs, ground_truths, extra_infos or [None] * len(solution_strs))
    return _batch(client, [solution_str], [ground_truth], [extra_info])[0]


def _batch(client, solutions, truths, infos):
    if not (len(solutions) == len(truths) == len(infos)):
        raise ValueError(f"compute_score: {len(solutions)} solutions, {len(truths)} ground truths, "
                         f"{len(infos)} extra_infos")
    groups = {}
    for i, (truth, info) in enumerate(zip(truths, infos)):
        info = info or {}
        key = (truth, info.get("reward_fn"), repr(info.get("options")))
        groups.setdefault(key, []).append(i)
    scores = [0.0] * len(solutions)
    for (truth, reward_fn, _), idx in groups.items():
        info = infos[idx[0]] or {}
        resp = client.rewards(completions=[solutions[i] for i in idx], reward_fn=reward_fn,
                              options=info.get("options"), **task_fields(truth))
        for i, r in zip(idx, resp["rewards"]):
            scores[i] = float(r if r is not None else 0.0)
    return scores
