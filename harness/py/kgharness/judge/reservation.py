"""What an evaluation reserves on the device (kgharness.zygote.admission grants it): each
process's share, from one forward call's shapes, and what a finished evaluation measured.
"""

from ..runner.exactsize import exact_pass_mb

CONTEXT_MB = 640          # one CUDA context with torch's handles (measured on an H200: 618 MiB)
DEFAULT_MB = 8192         # the runners' shares for a task whose shapes the meta pass could not find
MIN_RUNNER_MB = 2048      # what any runner may hold, however small its task


def quotas_mb(info, check=False):
    """Each process's share of a reservation, from one forward call's shapes (None when
    they are unknown): the reference runner twice its inputs, parameters and outputs (its
    temporaries), the candidate runner twice that (a kernel may need workspace the
    reference does not), at least MIN_RUNNER_MB each; the judge (its buffers in the judge
    service) three outputs; a task check's reference also its float64 pass, when it runs one.
    The shares size the reservation; only the candidate is capped (by gpu_memory_fraction,
    kgharness.runner)."""
    parts = [info.get(k) for k in ("input_bytes", "param_bytes", "output_bytes")]
    if any(not isinstance(p, int) for p in parts):
        return None
    ins, params, outs = parts
    call_mb = (ins + params + outs) / (1 << 20)
    ref = max(2 * call_mb, MIN_RUNNER_MB)
    out = {"reference": ref, "judge": (3 * outs + (64 << 20)) / (1 << 20)}
    if not check:
        out["candidate"] = max(2 * ref, MIN_RUNNER_MB)
    elif (extra := exact_pass_mb(call_mb)) is not None:
        out["reference"] += extra
    return out


def default_quotas(check=False):
    out = {"reference": DEFAULT_MB / 2, "judge": 512.0}
    if not check:
        out["candidate"] = DEFAULT_MB / 2
    return out


def total_mb(quotas):
    """What a reservation holds: the shares and one CUDA context per runner."""
    return sum(quotas.values()) + sum(k != "judge" for k in quotas) * CONTEXT_MB


def measured_mb(verdict):
    mem = verdict.get("device_memory") if isinstance(verdict, dict) else None
    if not isinstance(mem, dict):
        return None
    parts = [mem.get(k) for k in ("reference_mb", "candidate_mb", "judge_mb")]
    if not all(isinstance(p, (int, float)) for p in parts) or not any(parts):
        return None
    return sum(parts) + 2 * CONTEXT_MB
