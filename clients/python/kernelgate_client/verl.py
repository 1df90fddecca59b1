"""verl custom reward function: `custom_reward_function.path` = this file,
`custom_reward_function.name` = compute_score.

ground_truth is the task: a registered task id or the reference source. extra_info
may carry "reward_fn" and "options". Called with single values (verl's
NaiveRewardManager) it returns a float; called with lists (BatchRewardManager) it
returns a list, sending one request per task so a GRPO group is one batch.
"""

from .client import Client, rewards_by_group

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
    groups = [(truth, (info or {}).get("reward_fn"), (info or {}).get("options"))
              for truth, info in zip(truths, infos)]
    return rewards_by_group(client, solutions, groups)[0]
