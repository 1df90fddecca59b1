"""What a finished child's evaluation amounts to, as the zygote sees it.

The child's own verdict counts only when it arrived with the job's nonce and the
zygote did not kill the child; otherwise the verdict is built here from what the
zygote saw: its kill reason, the exit code or signal, the last stage, the output
tail. Streamed taints and forged records are added on top either way.
"""

import os
import signal

from . import sandbox
from .verdict import STATUSES, add_flag, finalize, name_task_failure, new_verdict

OUTPUT_TAIL_BYTES = 2048


class Outcomes:
    def __init__(self, mode, device, sandbox_info):
        self.mode, self.device, self.sandbox_info = mode, device, sandbox_info

    def for_child(self, child, status):
        """The verdict a finished child earns: its own only with the nonce, never by exit code."""
        tail = sandbox.tail(os.path.join(child.tmpdir, "output.log"), OUTPUT_TAIL_BYTES)
        v = child.verdict
        if child.kill_reason:
            v = self.fallback(child.job, *child.kill_reason, tail=tail)
        elif isinstance(v, dict) and v.get("status") in STATUSES:
            try:
                v = finalize(v)
            except Exception as e:
                v = self.fallback(child.job, "harness_error", f"malformed verdict from the child: {e}")
        elif v is not None:
            v = self.fallback(child.job, "harness_error", "malformed verdict from the child")
        elif os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:
            v = self.fallback(child.job, "reward_hack", f"the process exited with code 0 without "
                              f"a verdict during stage {child.stage}", flag="exit")
        elif os.WIFEXITED(status):
            v = self.fallback(child.job, "runtime_error", f"the process exited with code "
                              f"{os.WEXITSTATUS(status)} during stage {child.stage}", tail=tail)
        else:
            sig = os.WTERMSIG(status)
            try:
                name = signal.Signals(sig).name
            except ValueError:
                name = f"signal {sig}"
            if sig == signal.SIGKILL:
                v = self.fallback(child.job, "resource_limit", f"the process was killed by SIGKILL "
                                  f"(the kernel's OOM killer?) during stage {child.stage}", tail=tail)
            elif sig == signal.SIGXCPU:
                v = self.fallback(child.job, "timeout", f"the CPU time limit was exceeded "
                                  f"during stage {child.stage}", tail=tail)
            else:
                v = self.fallback(child.job, "runtime_error", f"the process crashed with {name} "
                                  f"during stage {child.stage}", tail=tail)
        if child.forged:
            add_flag(v, "patch")
            v["feedback"] = f"{child.forged}\n{v.get('feedback') or ''}"
        for flag, detail in child.taints:
            if flag not in v["hack_flags"]:
                add_flag(v, flag)
                v["feedback"] = f"{v.get('feedback') or ''}\nreward hack check: {flag}: {detail}"
        if not isinstance(v.get("stage_ms"), dict):
            v["stage_ms"] = {}
        started = child.started_t if child.started_t is not None else None
        if started is not None:
            v["stage_ms"]["fork"] = round((started - child.t_recv) * 1000.0, 3)
        for key, seconds in child.lock_stats.items():   # where the GPU lock's time went
            v["stage_ms"][f"lock_{key}"] = round(seconds * 1000.0, 3)
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


