"""Client for the kernelgate reward gateway (standard library only).

    from kernelgate_client import Client
    Client("http://127.0.0.1:8080").rewards(reference=src, completions=[...])

Trainer adapters: kernelgate_client.verl.compute_score (verl's custom reward
function) and kernelgate_client.trl.reward_function (a TRL GRPO reward function).
"""

from .client import Client, KernelgateError, task_fields

__all__ = ["Client", "KernelgateError", "task_fields"]
