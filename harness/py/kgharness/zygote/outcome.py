"""What a finished evaluation amounts to, as the zygote sees it.

The judge's verdict counts when it arrived with the job's nonce and the zygote did not
kill the evaluation; otherwise the verdict is built here from what the zygote saw: its
kill reason, the judge's exit code or signal, the last stage, the candidate's output
tail. The judge runs no foreign code, so a judge that dies without a verdict is a
harness error, never the candidate's success.
"""

import os
import signal
import time

from .. import procs
from . import watch
from ..verdict import STATUSES, add_flag, finalize, name_task_failure, new_verdict

OUTPUT_TAIL_BYTES = 2048


class Outcomes:
    def __init__(self, mode, device, sandbox_info):
        self.mode, self.device, self.sandbox_info = mode, device, sandbox_info

    def for_child(self, child, status):
        """The verdict a finished child earns: its own only with the nonce, never by exit code."""
        tail = procs.tail(os.path.join(child.tmpdir, "candidate", "output.log"), OUTPUT_TAIL_BYTES)
        v = child.verdict
        if child.kill_reason:
            status, feedback, task_error = child.kill_reason
            v = self.fallback(child.job, status, feedback, tail=tail)
            if task_error:
                v["task_error"] = task_error[:500]
        elif isinstance(v, dict) and v.get("status") in STATUSES:
            try:
                v = finalize(v)
            except Exception as e:
                v = self.fallback(child.job, "harness_error", f"malformed verdict from the child: {e}")
        elif v is not None:
            v = self.fallback(child.job, "harness_error", "malformed verdict from the child")
        else:
            judge_log = procs.tail(os.path.join(child.tmpdir, "output.log"), OUTPUT_TAIL_BYTES)
            if os.WIFEXITED(status):
                how = f"exited with code {os.WEXITSTATUS(status)}"
            else:
                try:
                    how = f"was killed by {signal.Signals(os.WTERMSIG(status)).name}"
                except ValueError:
                    how = f"was killed by signal {os.WTERMSIG(status)}"
            v = self.fallback(child.job, "harness_error", f"the judge process {how} without a verdict "
                              f"during stage {child.stage}", tail=judge_log)
        if child.forged:   # the judge's pipe carried a record it did not write: never a verdict
            v = self.fallback(child.job, "harness_error", f"{child.forged}; the verdict was refused")
        if not isinstance(v.get("stage_ms"), dict):
            v["stage_ms"] = {}
        started = child.started_t if child.started_t is not None else None
        if started is not None:
            v["stage_ms"]["fork"] = round((started - child.t_recv) * 1000.0, 3)
        for key, seconds in child.lock_stats.items():   # where the GPU lock's time went
            v["stage_ms"][f"lock_{key}"] = round(seconds * 1000.0, 3)
        # Stopped while other evaluations held the timing window: on a busy GPU the term
        # that bounds throughput (scripts/measure/summarize_grpo.py, "bound").
        frozen = watch.frozen_s(child, time.monotonic())
        if frozen > 0:
            v["stage_ms"]["lock_frozen"] = round(frozen * 1000.0, 3)
        v["output_tail"] = tail
        v = finalize(v)
        if isinstance(child.job, dict) and child.job.get("task_check"):
            name_task_failure(v)
        return v

    def fallback(self, job, status, feedback, flag=None, tail=""):
        v = new_verdict(self.mode, self.device)
        v["status"] = status
        v["feedback"] = feedback + (f"\n--- output tail ---\n{tail[-1024:]}" if tail else "")
        task = job.get("task") if isinstance(job, dict) else None
        if isinstance(task, dict) and isinstance(task.get("name"), str):
            v["task_name"] = task["name"]
        v["env"]["sandbox"] = self.sandbox_info.get("level", "")
        v["env"]["sandbox_detail"] = self.sandbox_info.get("detail", "")
        if flag:
            add_flag(v, flag)
        return finalize(v)


