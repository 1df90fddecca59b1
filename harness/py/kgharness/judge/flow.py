"""The judge: the one process of an evaluation that decides its verdict.

It never imports task or candidate code. It forks two runners (kgharness.runner): the
reference runner runs the task's `Model`, the candidate runner runs `ModelNew`. Both
write their outputs into buffers the judge owns (kgharness.exchange); the judge
compares them there, screens the reference, times both in one window on its own
clock as well as theirs (kgharness.judge.window), and builds the verdict. Everything a
runner says is a claim (kgharness.judge.talk): a malformed or unexpected message, a
write after "done" or a time the judge's clock cannot confirm earns `reward_hack` with
the flag `forge` at once.

This module sequences the stages and owns the verdict. Beside it: talk (the runners'
replies), devicememory (admission), sharing (shared reference work and hosts), trials
(correctness and the reference's screens), window (timing), checks (the last word),
taskcheck (a task check's stages).
"""

import contextlib
import random
import resource
import time

import torch

from .. import channel, options, pipe
from ..runner import feedback, loader, precompile
from ..verdict import FLAGS, STATUSES, add_flag, finalize, name_task_failure, new_verdict
from . import ablation, checks, refstore, reservation, screen, taskcheck, trials, window
from .devicememory import DeviceMemory
from .sharing import SharedReference
from .talk import RunnerTalk


class Fail(Exception):
    """Ends the evaluation early; the verdict already says why."""


class Judge:
    def __init__(self, job, ctx):
        self.job, self.ctx = job or {}, ctx
        self.gpu = ctx.mode == "gpu"
        self.dev = ctx.device if self.gpu else "cpu"
        self.verdict = new_verdict(ctx.mode, ctx.device)
        self.opts = options.parse(self.job.get("options"))
        self.task_check = bool(self.job.get("task_check"))
        self.task_tol = {}                  # the task's own ATOL / RTOL (kgharness.runner.loader)
        self.rng = random.SystemRandom()    # seeds and checks no runner can predict
        self.details = []                   # (flag, detail), for the feedback
        self.reference = self.candidate = None   # the runners' handles (kgharness.runner.spawn)
        self.ops = None                     # kgharness.judge.bufferops: buffers and comparisons
        self.launches, self.used_compile = 0, False   # the candidate's word, from its replies
        self.held, self.min_bytes = 0, None  # the reference's held-out sets and MIN_BYTES, once loaded
        self.talk = RunnerTalk(self)
        self.memory = DeviceMemory(self)
        self.sharing = SharedReference(self)
        self.stage_name, self.stage_since = None, None

    # ---- bookkeeping ---------------------------------------------------------------
    def stage(self, name):
        now = time.monotonic()
        if self.stage_name:
            self.verdict["stage_ms"][self.stage_name] = round((now - self.stage_since) * 1e3 +
                                                        self.verdict["stage_ms"].get(self.stage_name, 0.0), 3)
        self.stage_name, self.stage_since = name, now
        if name:
            self.ctx.stage(name)

    def flag(self, name, detail):
        if name not in FLAGS:
            return
        add_flag(self.verdict, name)
        if (name, detail) not in self.details:
            self.details.append((name, detail))

    def fail(self, status, fb, signature=""):
        self.verdict["status"] = status
        self.verdict["feedback"] = fb
        if signature:
            self.verdict["error_signature"] = signature
        raise Fail()

    def task_fail(self, reason):
        reason = str(reason).splitlines()[0] if reason else "the task failed"
        task = self.job.get("task") or {}
        label = task.get("path") or task.get("name") or "<task>"
        if not reason.startswith(label):
            reason = f"{label}: {reason}"
        self.verdict["task_error"] = reason[:500]
        self.fail("harness_error", f"task error: {self.verdict['task_error']}")

    def forge(self, detail):
        self.flag("forge", detail)
        self.fail("reward_hack", f"the candidate's process broke the judge's protocol: {detail}")

    def retry(self, reason, why):
        self.verdict["retry"] = reason
        self.fail("harness_error", f"{why}; the evaluation is to be retried")

    # ---- the flow -------------------------------------------------------------------
    def run(self):
        """The verdict, always (never raises)."""
        t0 = self.t_start = time.monotonic()
        try:
            self.go()
        except Fail:
            pass
        except BaseException as e:  # noqa: BLE001 - the contract is "never raise"
            self.verdict["status"] = "harness_error"
            self.verdict["feedback"] = f"internal harness error: {type(e).__name__}: {e}"[:800]
            if self.gpu and (getattr(e, "oom", False) or feedback.is_device_oom(e)):
                self.verdict["retry"] = "gpu_oom"   # the judge's own buffers did not fit: try again
        try:
            self.close()
            self.verdict["stage_ms"]["total"] = round((time.monotonic() - t0) * 1e3, 3)
            finalize(self.verdict)
            if self.task_check:
                name_task_failure(self.verdict)
        except BaseException as e:  # noqa: BLE001
            self.verdict.update(status="harness_error", correct=False, speedup=None,
                          feedback=f"internal harness error while finalizing: {type(e).__name__}: {e}"[:800])
        return self.verdict

    def go(self):
        v, job, sharing = self.verdict, self.job, self.sharing
        task = job.get("task") or {}
        v["task_name"] = task.get("name") or ""
        v["env"].update(torch=torch.__version__, triton=_triton_version(),
                        sandbox=(self.ctx.sandbox or {}).get("level", ""),
                        sandbox_detail=(self.ctx.sandbox or {}).get("detail", ""))
        try:
            self.task_tol = loader.declared_tolerance(task)
        except loader.TaskError as e:
            self.task_fail(str(e))
        if self.task_check:
            return taskcheck.check_task(self, task)
        try:
            loader.check_task_source(task)
        except loader.TaskError as e:
            self.task_fail(str(e))
        code = job.get("code")
        try:
            loader.validate_submission(code, self.opts["max_code_bytes"])
        except loader.SubmissionError as e:
            sig = feedback.error_signature(SyntaxError(e.feedback.splitlines()[0])) \
                if e.status == "compile_error" else ""
            self.fail(e.status, e.feedback, sig)
        v["warnings"] = screen.screen(code)
        self.reference = self.ctx.spawn("reference", job)
        self.candidate = self.ctx.spawn("candidate", job)
        self.ctx.seal()
        # The judge service (no CUDA context here) before admission: whether the task's
        # reference work is shared decides what the evaluation reserves. The entry itself
        # is taken after admission (it may have been published, or evicted, meanwhile).
        self.init_device()
        self.precompile()
        sharing.key = refstore.key(self.job, self.opts)
        self.ctx.uses_share(sharing.key)
        has = self.ops.has_shared(sharing.key).get("exists") is True
        sharing.host_role = self.ctx.host_ask(has)
        sharing.hosted = sharing.host_role == pipe.ASK_USE
        self.memory.admit(check=False, share=has and not sharing.host_role)
        sharing.find()
        sharing.take_host()
        self.stage("load")
        if sharing.hosted:
            # The reference is the host's, lent in the window: nothing of it loads here.
            rr, rc = {"held": sharing.entry.get("held_count")}, self.talk.ask(self.candidate, "load")
        else:
            # Owing its memory, the reference makes no call until the candidate has passed.
            rr, rc = self.talk.ask_both("load", {"warm": not self.memory.owed})
            sharing.host_sound = sharing.host_role == pipe.ASK_CREATE
        v["compiled"] = True
        checks.note_sandbox(self, rc.get("sandbox"))
        v["stage_ms"]["reference"] = channel.reported_ms(rr.get("runner_ms"))
        for role, rep in (("reference", rr), ("candidate", rc)):
            for k, x in (rep.get("phases_ms") if isinstance(rep.get("phases_ms"), dict) else {}).items():
                if k in ("sandbox", "cuda", "build", "warm"):
                    v["stage_ms"][f"{role}_{k}"] = channel.reported_ms(x)
        self.held, self.min_bytes = channel.held_count(rr.get("held")), rr.get("min_bytes")
        if sharing.entry is not None and sharing.entry.get("held_count") != self.held and not sharing.hosted:
            sharing.entry = None    # not the work this task's reference does now: its own
            v["reference_shared"] = False
            sharing.enabled = False      # nor its published reference-alone figure
            self.memory.bring_reference_memory()
        self.stage("correctness")
        t = trials.Trials(self)
        failure = t.run()
        v["reference_checked"] = True   # every seed's reference outputs passed the screens
        checks.conclude(self, failure)
        if self.gpu and not self.memory.owed:   # an owed reference has not run: not the task's footprint
            mb = reservation.measured_mb({"device_memory": self.memory.footprint()})
            if mb:
                self.ctx.measured(mb)
        windowed = self.timed()
        if windowed:
            if self.memory.owed:
                sharing.bring_reference(t)
            self.stage("timing")
            window.Window(self, t).run()
            ablation.reference(t)
            with contextlib.suppress(Exception):   # unsound: retired when this evaluation ends
                sharing.host_done()
        self.stage("checks")
        checks.final_checks(self)
        ablation.check(t, windowed)

    def init_device(self):
        """The judge's buffers and computations: in the GPU's judge service when the zygote
        runs one (the judge then has no CUDA context), else in this process."""
        t0 = time.monotonic()
        self.ops = self.ctx.buffer_ops()
        self.info = self.ops.info() if self.gpu else {}
        if self.gpu:
            self.verdict["env"]["gpu_name"] = str(self.info.get("gpu_name") or "")[:120]
            self.verdict["stage_ms"]["judge_device"] = round((time.monotonic() - t0) * 1e3, 3)

    def precompile(self):
        """The candidate's kernels compiled before admission (kgharness.runner.precompile): the
        first call then finds them, and the compile no longer holds reserved memory."""
        if not precompile.wanted(self.gpu):
            return
        cap = self.info.get("capability") if self.gpu else precompile.CPU_TARGET
        if not (isinstance(cap, list) and len(cap) == 2):
            return
        # The zygote lets this stage run through other evaluations' windows: nothing of
        # this evaluation but the compile-only child works until `precompiled`.
        self.stage("precompile")
        try:
            rep = self.talk.ask(self.candidate, "precompile", capability=[int(x) for x in cap])
        finally:
            self.ctx.precompiled()
        got = rep.get("precompile") if isinstance(rep.get("precompile"), dict) else {}
        for k in ("kernels", "launchers", "launchers_found"):
            if isinstance(got.get(k), int):
                self.verdict["stage_ms"][f"precompile_{k}"] = got[k]
        if isinstance(got.get("signatures"), list):
            # Names only: the zygote checks them and builds their launchers itself
            # (kgharness.runner.launchers), for the runners that start after this one.
            self.ctx.launchers(got["signatures"])

    def timed(self):
        v, o = self.verdict, self.opts
        want = o["timing"] and (self.gpu or o["cpu_timing"])
        return bool(want) and v["status"] == "correct" and not v["hack_flags"]

    def close(self):
        self.stage(None)
        mem = self.memory.footprint()
        if mem is not None:
            self.verdict["device_memory"] = mem
        if self.sharing.host_sound and not self.verdict.get("task_error") and not self.verdict.get("retry") and \
                self.verdict["status"] != "timeout":
            with contextlib.suppress(Exception):
                self.sharing.host_done()
        for r in (self.candidate, self.reference):
            if r is not None:
                with contextlib.suppress(Exception):
                    r.kill()
                if r.cpu_s is not None:
                    self.verdict["stage_ms"][f"cpu_{r.role}"] = round(r.cpu_s * 1e3, 3)
        ru = resource.getrusage(resource.RUSAGE_SELF)
        self.verdict["stage_ms"]["cpu_judge"] = round((ru.ru_utime + ru.ru_stime) * 1e3, 3)
        if self.ops is not None:
            self.ops.close()
        if self.details:
            detail = "; ".join(f"{f}: {d}" for f, d in self.details[:6])
            self.verdict["feedback"] = (self.verdict["feedback"] + "\n" if self.verdict["feedback"] else "") + \
                f"reward hack checks failed: {detail}"
        if self.verdict["status"] not in STATUSES:
            self.verdict["status"] = "harness_error"


def _triton_version():
    try:
        import triton
        return triton.__version__
    except Exception:
        return ""


def evaluate(job, ctx):
    """Evaluate one job in this (judge) process; always a finalized verdict, never raises."""
    return Judge(job, ctx).run()
