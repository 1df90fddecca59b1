"""A TRL GRPO reward function: GRPOTrainer(reward_funcs=[reward_function(...)], ...).

TRL calls it with the batch's `completions` (strings, or chat message lists) and every
dataset column as a keyword list; the task comes from the column named by `task_column`
("task": a registered task id or the reference source). Completions of one task go to
the gateway as one batch. A sample the gateway marks invalid (a harness or task error,
not the model's doing) gets None, which TRL leaves out of the loss.
"""

from .client import Client, rewards_by_group


def reward_function(client=None, reward_fn=None, options=None, task_column="task"):
    client = client or Client()

    def kernelgate_reward(prompts=None, completions=None, **columns):
        tasks = columns.get(task_column)
        if tasks is None:
            raise ValueError(f"kernelgate reward: the dataset needs a {task_column!r} column "
                             "(task id or reference source)")
        rewards, valid = rewards_by_group(client, [_text(c) for c in completions],
                                          [(t, reward_fn, options) for t in tasks])
        # None is TRL's "not applicable": a sample the gateway marks invalid (a harness
        # or task error, not the model's doing) is left out of the loss.
        return [r if ok else None for r, ok in zip(rewards, valid)]

    kernelgate_reward.__name__ = f"kernelgate_{reward_fn or 'adaexplore'}"
    return kernelgate_reward


def _text(completion):
    """A plain completion, or the assistant's text in a conversational one."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, list):
        return "".join(m.get("content", "") for m in completion if isinstance(m, dict)
                       and m.get("role", "assistant") == "assistant")
    raise TypeError(f"completion of type {type(completion).__name__}: want str or a list of messages")
