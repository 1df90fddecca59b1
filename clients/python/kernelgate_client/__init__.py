"""Client for the kernelgate reward gateway (standard library only).

    from kernelgate_client import Client
    Client("http://127.0.0.1:8080").rewards(reference=src, completions=[...])

Every failure raises KernelgateError (status, code, message, field, batch_id):
KernelgateUnavailable when retries ran out on a gateway that cannot be reached or
keeps answering 429/502/503, KernelgateTimeout when a batch outlives timeout_s.

Trainer adapters: kernelgate_client.verl.compute_score (verl's custom reward
function) and kernelgate_client.trl.reward_function (a TRL GRPO reward function).
"""

from .client import (Client, KernelgateError, KernelgateTimeout, KernelgateUnavailable,
                     rewards_by_group, task_fields)

__all__ = ["Client", "KernelgateError", "KernelgateTimeout", "KernelgateUnavailable",
           "rewards_by_group", "task_fields"]
