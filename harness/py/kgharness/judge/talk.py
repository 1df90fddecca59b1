"""The judge's side of its runners' channels: a request, its reply, and what the reply
costs the runner that sent it.

Everything a runner says is a claim: a failure it reports can only cost its own side,
its detectors can only add flags, and a malformed or unexpected message earns the
candidate `reward_hack` with the flag `forge` at once (the reference, a task error).
"""

import os
import signal

from .. import channel
from ..runner import spawn

# What a candidate runner may say about its own failure (it cannot claim more).
CANDIDATE_FAILURES = ("compile_error", "runtime_error", "resource_limit", "invalid_submission")


class RunnerTalk:
    """`judge` is the kgharness.judge.flow.Judge whose verdict the replies decide."""

    def __init__(self, judge):
        self.judge = judge

    def ask(self, r, op, fds=(), **fields):
        return self.settle(r, lambda: r.ask(op, fds=fds, **fields))

    def ask_both(self, op, r_fields=None, c_fields=None):
        """One request to each runner at once; the reference's answer is read first, so a
        broken task is reported as such even when the candidate hangs."""
        ref, cand = self.judge.reference, self.judge.candidate
        seq_r = self.settle(ref, lambda: ref.request(op, **(r_fields or {})))
        seq_c = self.settle(cand, lambda: cand.request(op, **(c_fields or {})))
        rr = self.settle(ref, lambda: ref.reply(op, seq_r))
        rc = self.settle(cand, lambda: cand.reply(op, seq_c))
        return rr, rc

    def settle(self, r, fn):
        """Run one channel step with runner r; turn its death or a bad message into a verdict."""
        j = self.judge
        try:
            out = fn()
        except spawn.RunnerGone as g:
            self.runner_gone(g)
        except channel.Malformed as m:
            if r.role == "reference":
                j.task_fail(f"the reference process sent a malformed message: {m}")
            j.forge(f"a malformed message on the judge's channel ({m})")
        except TimeoutError:
            j.fail("timeout", f"the {r.role} did not answer in time during {j.stage_name}")
        if isinstance(out, dict):
            self.absorb(r, out)
        return out

    def absorb(self, r, reply):
        """Flags and counters a reply carries; a failure it reports ends the evaluation."""
        j = self.judge
        for item in (reply.get("flags") or [])[:32] + r.chan.taints:
            if isinstance(item, (list, tuple)) and len(item) == 2 and isinstance(item[0], str):
                if r.role == "candidate":
                    j.flag(item[0], str(item[1])[:200])
        r.chan.taints = []
        peak = reply.get("mem_peak_mb")
        if isinstance(peak, (int, float)) and not isinstance(peak, bool) and peak >= 0:
            j.memory.peaks[r.role] = max(j.memory.peaks.get(r.role, 0.0), float(peak))
        if reply.get("oom") is True and reply.get("ok") is not True:
            self.device_oom(r, reply)
        if r.role == "candidate":
            if isinstance(reply.get("launches"), int) and reply["launches"] >= 0:
                j.launches = reply["launches"]
            j.used_compile = reply.get("used_compile") is True or j.used_compile
        if reply.get("ok") is True:
            return
        if r.role == "reference":
            j.task_fail(reply.get("task_error") if isinstance(reply.get("task_error"), str)
                        else "the reference failed")
        status = reply.get("status")
        if status not in CANDIDATE_FAILURES:
            if status == "harness_error":
                j.fail("harness_error", str(reply.get("feedback"))[:1000])
            j.forge(f"the candidate reported status {str(status)[:40]!r}")
        if status != "invalid_submission":
            j.verdict["compiled"] = j.stage_name != "load" or status != "compile_error"
        j.fail(status, str(reply.get("feedback") or "")[:4000], str(reply.get("error_signature") or "")[:300])

    def device_oom(self, r, reply):
        """Out of GPU memory. The reference's OOM, and the candidate's while it held less
        than its share, were caused by whatever else is on the GPU: the supervisor retries
        the evaluation (docs/protocol.md, retry) instead of taking this as its verdict."""
        j = self.judge
        if j.memory.alone and r.role == "reference":
            j.task_fail(f"the task does not fit this GPU: the reference ran out of memory with "
                        f"the GPU to itself during {j.stage_name}")
        if r.role == "candidate":
            if j.memory.alone:
                # Nothing else held the GPU: its own failure, as it reported. The claim
                # below (what it held) is the candidate's word; without this, raising an
                # out-of-memory error of its own making bought a retry each time and, once
                # the retries ran out, an evaluation that does not count (valid: false)
                # instead of the failure it was. Its retries run alone in the end: two
                # out-of-memory errors reserve the whole GPU for its retry (zygote.admission).
                return
            share, cap = reply.get("own_share"), reply.get("cap")
            if not (isinstance(share, (int, float)) and isinstance(cap, (int, float)) and share < 0.9 * cap):
                return   # it used its share: its own resource_limit, as it reported
        # The reference, or a candidate below its cap, found the GPU full: retry, and the
        # zygote reserves more for the task next time.
        j.retry("gpu_oom", f"the {r.role} ran out of GPU memory during {j.stage_name} while other "
                f"work held the rest")

    def runner_gone(self, g):
        j = self.judge
        why = f"the {g.role} process {g.why} during {j.stage_name}"
        if g.role == "reference":
            j.task_fail(why)
        if g.status is None:
            j.forge(why)
        st = g.status
        if os.WIFEXITED(st) and os.WEXITSTATUS(st) == 0:
            j.flag("exit", "the candidate's process exited with code 0 before it finished")
            j.fail("reward_hack", why)
        if os.WIFSIGNALED(st) and os.WTERMSIG(st) == signal.SIGKILL:
            j.fail("resource_limit", why + " (the kernel's OOM killer?)")
        if os.WIFSIGNALED(st) and os.WTERMSIG(st) == signal.SIGXCPU:
            j.fail("timeout", why + " (CPU time limit)")
        j.fail("runtime_error", why)
