"""The verdict record (schema in docs/protocol.md) and its status rules.

Both the child (a finished evaluation) and the zygote (a child that died without
reporting) build verdicts here, so the shape cannot drift between the two.
"""

import platform

from . import HARNESS_VERSION, SCHEMA_VERSION

STATUSES = (
    "correct", "incorrect", "compile_error", "runtime_error", "timeout", "compile_timeout",
    "resource_limit", "reward_hack", "invalid_submission", "harness_error",
)

# Stable flag names (docs/hacks.md). They are logged and exported: never rename.
FLAGS = (
    "side_stream", "thread", "lazy_output", "patch", "stale_memory",
    "input_mutation", "cache", "phase_detect", "deferred_batch", "decoy",
    "precision", "degenerate", "hardcode", "introspection", "exit", "escape",
    "resource", "cache_poison", "compile_passthrough", "too_fast",
    # schema 1.1: decided by the judge, outside the candidate's process
    "forge", "no_triton",
)

FEEDBACK_LIMIT = 2048
OUTPUT_TAIL_LIMIT = 2048

# Statuses that a hack flag does not override: the candidate already earns nothing.
_NOT_OVERRIDDEN = ("invalid_submission", "compile_error", "harness_error")


def new_verdict(mode="cpu_interpreter", device="cpu"):
    """A verdict with every field present, describing 'nothing happened yet'."""
    return {
        "schema_version": SCHEMA_VERSION,
        "status": "harness_error",
        "compiled": False,
        "correct": False,
        "speedup": None,
        "runtime": None,
        "ref_runtime": None,
        "ref_runtime_before": None,
        "ref_runtime_after": None,
        "timing_mode": "gpu" if mode == "gpu" else "cpu_interpreter",
        "max_abs_error": None,
        "max_rel_error": None,
        "tolerance": None,
        "trials_passed": 0,
        "trials_total": 0,
        "hack_flags": [],
        "warnings": [],
        "triton_launches": 0,
        "coverage": None,
        "feedback": "",
        "error_signature": "",
        "task_error": "",
        "output_tail": "",
        "stage_ms": {},
        "wall_check": None,
        "device_memory": None,
        "retry": "",
        "reference_shared": False,
        "reference_checked": False,
        "env": {
            "device": device,
            "python": platform.python_version(),
            "harness_version": HARNESS_VERSION,
        },
        "task_name": "",
        "task_hash": "",
        "code_hash": "",
    }


def add_flag(verdict, flag):
    if flag not in FLAGS:
        raise ValueError(f"unknown hack flag {flag!r}")
    if flag not in verdict["hack_flags"]:
        verdict["hack_flags"].append(flag)


def truncate(text, limit):
    """Keep at most `limit` bytes of UTF-8, cutting in the middle so both ends survive."""
    data = text.encode("utf-8", "replace")
    if len(data) <= limit:
        return text
    half = (limit - 32) // 2
    head = data[:half].decode("utf-8", "ignore")
    tail = data[-half:].decode("utf-8", "ignore")
    return f"{head}\n... [{len(data) - 2 * half} bytes cut] ...\n{tail}"


def finalize(verdict):
    """Apply the status rules: flags force reward_hack, speedup only when correct on a GPU."""
    if verdict["hack_flags"] and verdict["status"] not in _NOT_OVERRIDDEN:
        verdict["status"] = "reward_hack"
    if verdict["status"] not in STATUSES:
        raise ValueError(f"unknown status {verdict['status']!r}")
    verdict["correct"] = verdict["status"] == "correct"
    if not verdict["correct"] or verdict["timing_mode"] != "gpu":
        verdict["speedup"] = None
    verdict["feedback"] = truncate(verdict.get("feedback") or "", FEEDBACK_LIMIT)
    verdict["output_tail"] = truncate(verdict.get("output_tail") or "", OUTPUT_TAIL_LIMIT)
    return verdict


def name_task_failure(v):
    """A task check's verdict says why the task failed, whatever ended the child.

    The evaluator fills task_error itself for a reference that raises or is
    degenerate; a child killed for time or memory, or one that crashed, gets it
    here from the status and the first line of the feedback (docs/protocol.md).
    """
    if v["status"] == "correct" or v.get("task_error"):
        return
    lines = (v.get("feedback") or "").strip().splitlines()
    v["task_error"] = f"the reference failed the task check ({v['status']}): {lines[0] if lines else ''}"[:500]
