"""The judge: the one process of an evaluation that decides its verdict.

It never imports task or candidate code. It forks two runners (kgharness.runner): the
reference runner runs the task's `Model`, the candidate runner runs `ModelNew`. Both
write their outputs into buffers the judge owns (kgharness.exchange); the judge
compares them there, screens the reference, times both in one window on its own
clock as well as theirs (kgharness.window), and builds the verdict. Everything a
runner says is a claim: a failure it reports can only cost its own side, its
detectors can only add flags, and a malformed or unexpected message, a write after
"done" or a time the judge's clock cannot confirm earns `reward_hack` with the flag
`forge` at once.

This module sequences the stages and owns the verdict; kgharness.trials runs the
correctness trials and the reference screens; kgharness.window runs the timing.
"""

import contextlib
import os
import random
import resource
import signal
import time

import torch

from . import (admission, channel, feedback, loader, precompile, refhost, refstore, screen, spawn,
               taskcheck, trials, window)
from .verdict import FLAGS, STATUSES, add_flag, finalize, name_task_failure, new_verdict

DEFAULTS = {"seeds": 5, "seed": 0, "atol": None, "rtol": None, "timing": True,
            "timing_budget_ms": 50, "min_iters": 5, "max_iters": 500,
            "copy_weights": False, "max_code_bytes": 262144, "gpu_memory_fraction": 0.25,
            "require_triton": True, "cpu_timing": False}

# "on": an evaluation reserves its runners' CUDA contexts ahead of the rest of its device
# memory and makes them while it waits (kgharness.admission). Off by default: +5% on heavy
# GRPO groups on an H200, and its waiting contexts take headroom (README, Measurements).
EARLY_CONTEXTS_ENV = "KERNELGATE_EARLY_CONTEXTS"

# What a candidate runner may say about its own failure (it cannot claim more).
CANDIDATE_FAILURES = ("compile_error", "runtime_error", "resource_limit", "invalid_submission")


class Fail(Exception):
    """Ends the evaluation early; the verdict already says why."""


def options(raw):
    opts = dict(DEFAULTS)
    for k, v in (raw or {}).items():
        if k in opts and v is not None:
            opts[k] = v
    for k in ("seeds", "seed", "min_iters", "max_iters", "max_code_bytes"):
        opts[k] = int(opts[k])
    opts["seeds"] = max(1, min(opts["seeds"], 100))
    opts["timing_budget_ms"] = float(opts["timing_budget_ms"])
    return opts


class Judge:
    def __init__(self, job, ctx):
        self.job, self.ctx = job or {}, ctx
        self.gpu = ctx.mode == "gpu"
        self.dev = ctx.device if self.gpu else "cpu"
        self.v = new_verdict(ctx.mode, ctx.device)
        self.opts = options(self.job.get("options"))
        self.task_check = bool(self.job.get("task_check"))
        self.task_tol = {}                  # the task's own ATOL / RTOL (kgharness.loader)
        self.rng = random.SystemRandom()    # seeds and checks no runner can predict
        self.details = []                   # (flag, detail), for the feedback
        self.R = self.C = None
        self.ops = None                     # kgharness.bufferops: buffers and comparisons
        self.launches, self.used_compile = 0, False
        self.mem = {}                       # role -> peak MiB reserved on the device
        self.alone = False                  # admitted with the GPU to itself
        # Admitted without its reference's memory (kgharness.admission, "the reference
        # later"): the reference runner is loaded but makes its first call only once the
        # candidate has passed, after reserve_more. In CPU mode every shared evaluation
        # works this way (there is no memory to wait for; a failing candidate then costs
        # no reference call at all).
        self.owed = False
        # The shared reference work (kgharness.refstore): the key, whether this GPU's
        # judge service shares at all, and the entry this evaluation uses (None: its own
        # reference runner does the work, and publishes it when complete).
        self.share_key, self.share_on, self.shared, self.publisher = None, False, None, False
        # The reference host (kgharness.refhost): ASK_CREATE, this evaluation loads it and
        # uses it as its reference runner; ASK_USE (hosted), it borrows it in its window only.
        self.host_role, self.hosted, self.host_sound = refhost.ASK_NONE, False, False
        self.ref_mb = 0.0            # the reference's share of the reservation (MiB, no context)
        self._stage, self._stage_t = None, None

    # ---- bookkeeping ---------------------------------------------------------------
    def stage(self, name):
        now = time.monotonic()
        if self._stage:
            self.v["stage_ms"][self._stage] = round((now - self._stage_t) * 1e3 +
                                                    self.v["stage_ms"].get(self._stage, 0.0), 3)
        self._stage, self._stage_t = name, now
        if name:
            self.ctx.stage(name)

    def flag(self, name, detail):
        if name not in FLAGS:
            return
        add_flag(self.v, name)
        if (name, detail) not in self.details:
            self.details.append((name, detail))

    def fail(self, status, fb, signature=""):
        self.v["status"] = status
        self.v["feedback"] = fb
        if signature:
            self.v["error_signature"] = signature
        raise Fail()

    def task_fail(self, reason):
        reason = str(reason).splitlines()[0] if reason else "the task failed"
        task = self.job.get("task") or {}
        label = task.get("path") or task.get("name") or "<task>"
        if not reason.startswith(label):
            reason = f"{label}: {reason}"
        self.v["task_error"] = reason[:500]
        self.fail("harness_error", f"task error: {self.v['task_error']}")

    def forge(self, detail):
        self.flag("forge", detail)
        self.fail("reward_hack", f"the candidate's process broke the judge's protocol: {detail}")

    # ---- talking to runners ------------------------------------------------------------
    def ask(self, r, op, fds=(), **fields):
        return self.settle(r, lambda: r.ask(op, fds=fds, **fields))

    def ask_both(self, op, r_fields=None, c_fields=None):
        """One request to each runner at once; the reference's answer is read first, so a
        broken task is reported as such even when the candidate hangs."""
        seq_r = self.settle(self.R, lambda: self.R.request(op, **(r_fields or {})))
        seq_c = self.settle(self.C, lambda: self.C.request(op, **(c_fields or {})))
        rr = self.settle(self.R, lambda: self.R.reply(op, seq_r))
        rc = self.settle(self.C, lambda: self.C.reply(op, seq_c))
        return rr, rc

    def settle(self, r, fn):
        """Run one channel step with runner r; turn its death or a bad message into a verdict."""
        try:
            out = fn()
        except spawn.RunnerGone as g:
            self.runner_gone(g)
        except channel.Malformed as m:
            if r.role == "reference":
                self.task_fail(f"the reference process sent a malformed message: {m}")
            self.forge(f"a malformed message on the judge's channel ({m})")
        except TimeoutError:
            self.fail("timeout", f"the {r.role} did not answer in time during {self._stage}")
        if isinstance(out, dict):
            self.absorb(r, out)
        return out

    def absorb(self, r, reply):
        """Flags and counters a reply carries; a failure it reports ends the evaluation."""
        for item in (reply.get("flags") or [])[:32] + r.chan.taints:
            if isinstance(item, (list, tuple)) and len(item) == 2 and isinstance(item[0], str):
                if r.role == "candidate":
                    self.flag(item[0], str(item[1])[:200])
        r.chan.taints = []
        peak = reply.get("mem_peak_mb")
        if isinstance(peak, (int, float)) and not isinstance(peak, bool) and peak >= 0:
            self.mem[r.role] = max(self.mem.get(r.role, 0.0), float(peak))
        if reply.get("oom") is True and reply.get("ok") is not True:
            self.device_oom(r, reply)
        if r.role == "candidate":
            if isinstance(reply.get("launches"), int) and reply["launches"] >= 0:
                self.launches = reply["launches"]
            self.used_compile = reply.get("used_compile") is True or self.used_compile
        if reply.get("ok") is True:
            return
        if r.role == "reference":
            self.task_fail(reply.get("task_error") if isinstance(reply.get("task_error"), str)
                           else "the reference failed")
        status = reply.get("status")
        if status not in CANDIDATE_FAILURES:
            if status == "harness_error":
                self.fail("harness_error", str(reply.get("feedback"))[:1000])
            self.forge(f"the candidate reported status {str(status)[:40]!r}")
        if status != "invalid_submission":
            self.v["compiled"] = self._stage != "load" or status != "compile_error"
        self.fail(status, str(reply.get("feedback") or "")[:4000], str(reply.get("error_signature") or "")[:300])

    def device_oom(self, r, reply):
        """Out of GPU memory. The reference's OOM, and the candidate's while it held less
        than its share, were caused by whatever else is on the GPU: the supervisor retries
        the evaluation (PROTOCOL.md, retry) instead of taking this as its verdict."""
        if self.alone and r.role == "reference":
            self.task_fail(f"the task does not fit this GPU: the reference ran out of memory with "
                           f"the GPU to itself during {self._stage}")
        if r.role == "candidate":
            share, cap = reply.get("own_share"), reply.get("cap")
            if not (isinstance(share, (int, float)) and isinstance(cap, (int, float)) and share < 0.9 * cap):
                return   # it used its share: its own resource_limit, as it reported
        # The reference, or a candidate below its cap, found the GPU full: retry, and the
        # zygote reserves more for the task next time.
        self.retry("gpu_oom", f"the {r.role} ran out of GPU memory during {self._stage} while other "
                   f"work held the rest")

    def retry(self, reason, why):
        self.v["retry"] = reason
        self.fail("harness_error", f"{why}; the evaluation is to be retried")

    def runner_gone(self, g):
        why = f"the {g.role} process {g.why} during {self._stage}"
        if g.role == "reference":
            self.task_fail(why)
        if g.status is None:
            self.forge(why)
        st = g.status
        if os.WIFEXITED(st) and os.WEXITSTATUS(st) == 0:
            self.flag("exit", "the candidate's process exited with code 0 before it finished")
            self.fail("reward_hack", why)
        if os.WIFSIGNALED(st) and os.WTERMSIG(st) == signal.SIGKILL:
            self.fail("resource_limit", why + " (the kernel's OOM killer?)")
        if os.WIFSIGNALED(st) and os.WTERMSIG(st) == signal.SIGXCPU:
            self.fail("timeout", why + " (CPU time limit)")
        self.fail("runtime_error", why)

    # ---- the flow -------------------------------------------------------------------
    def run(self):
        """The verdict, always (never raises)."""
        t0 = self.t_start = time.monotonic()
        try:
            self.go()
        except Fail:
            pass
        except BaseException as e:  # noqa: BLE001 - the contract is "never raise"
            self.v["status"] = "harness_error"
            self.v["feedback"] = f"internal harness error: {type(e).__name__}: {e}"[:800]
            if self.gpu and (getattr(e, "oom", False) or feedback.is_device_oom(e) or
                             "CUDA driver error 2" in str(e)):
                self.v["retry"] = "gpu_oom"   # the judge's own buffers did not fit: try again
        try:
            self.close()
            self.v["stage_ms"]["total"] = round((time.monotonic() - t0) * 1e3, 3)
            finalize(self.v)
            if self.task_check:
                name_task_failure(self.v)
        except BaseException as e:  # noqa: BLE001
            self.v.update(status="harness_error", correct=False, speedup=None,
                          feedback=f"internal harness error while finalizing: {type(e).__name__}: {e}"[:800])
        return self.v

    def go(self):
        v, job = self.v, self.job
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
        self.R = self.ctx.spawn("reference", job)
        self.C = self.ctx.spawn("candidate", job)
        self.ctx.seal()
        # The judge service (no CUDA context here) before admission: whether the task's
        # reference work is shared decides what the evaluation reserves. The entry itself
        # is taken after admission (it may have been published, or evicted, meanwhile).
        self.init_device()
        self.precompile()
        self.share_key = refstore.key(self.job, self.opts)
        self.ctx.uses_share(self.share_key)
        has = self.ops.has_shared(self.share_key).get("exists") is True
        self.host_role = self.ctx.host_ask(has)
        self.hosted = self.host_role == refhost.ASK_USE
        self.admit(check=False, share=has and not self.host_role)
        self.find_shared()
        self.take_host()
        self.stage("load")
        if self.hosted:
            # The reference is the host's, lent in the window: nothing of it loads here.
            rr, rc = {"held": self.shared.get("held_count")}, self.ask(self.C, "load")
        else:
            # Owing its memory, the reference makes no call until the candidate has passed.
            rr, rc = self.ask_both("load", {"warm": not self.owed})
            self.host_sound = self.host_role == refhost.ASK_CREATE
        v["compiled"] = True
        self.note_sandbox(rc.get("sandbox"))
        v["stage_ms"]["reference"] = channel.reported_ms(rr.get("runner_ms"))
        for role, rep in (("reference", rr), ("candidate", rc)):
            for k, x in (rep.get("phases_ms") if isinstance(rep.get("phases_ms"), dict) else {}).items():
                if k in ("sandbox", "cuda", "build", "warm"):
                    v["stage_ms"][f"{role}_{k}"] = channel.reported_ms(x)
        self.held, self.min_bytes = channel.held_count(rr.get("held")), rr.get("min_bytes")
        if self.shared is not None and self.shared.get("held_count") != self.held and not self.hosted:
            self.shared = None      # not the work this task's reference does now: its own
            v["reference_shared"] = False
            self.share_on = False   # nor its published reference-alone figure
            self.bring_reference_memory()
        self.stage("correctness")
        t = trials.Trials(self)
        failure = t.run()
        v["reference_checked"] = True   # every seed's reference outputs passed the screens
        self.conclude(failure)
        if self.gpu and not self.owed:   # an owed reference has not run: not the task's footprint
            mb = admission.measured_mb({"device_memory": self.footprint()})
            if mb:
                self.ctx.measured(mb)
        if self.timed():
            if self.owed:
                self.bring_reference(t)
            self.stage("timing")
            window.Window(self, t).run()
            with contextlib.suppress(Exception):   # unsound: retired when this evaluation ends
                self.host_done()
        self.stage("checks")
        self.final_checks()

    def admit(self, check, info=None, share=False):
        """Wait for the GPU's memory (the zygote's admission) before the runners' CUDA work."""
        if not self.gpu:
            return
        self.stage("admission")
        if info is None:
            rep = self.ask(self.R, "load", describe=True, describe_only=True)
            info = rep.get("task_info") if isinstance(rep.get("task_info"), dict) else {}
        quotas = admission.quotas_mb(info, check=check) or admission.default_quotas(check)
        want = admission.total_mb(quotas)
        self.ref_mb = quotas["reference"]
        # A shared evaluation's reference only runs in the timing window: its share may
        # come later (kgharness.admission), if the candidate passes.
        later = quotas["reference"] if share and not check else 0.0
        # A host it inherited may be ready by the time it is admitted: then its reference's
        # share is owed, and cancelled when it borrows the host (take_host).
        host_mb = quotas["reference"] if not check and not self.host_role and self.ctx.inherits_host() else 0.0
        asked = []
        if not check and os.environ.get(EARLY_CONTEXTS_ENV, "off") == "on":
            # Contexts first (kgharness.admission): the runners make theirs while the judge
            # waits for the rest of the reservation.
            runners = (self.R, self.C)
            self.ctx.reserve(len(runners) * admission.CONTEXT_MB, contexts=True)
            asked = [(r, self.settle(r, lambda r=r: r.request("cuda"))) for r in runners]
        if self.hosted:
            _, self.alone = self.ctx.reserve_hosted(want, self.ref_mb)
        elif later or host_mb:
            _, self.alone, self.owed = self.ctx.reserve_first(want, later, host_mb)
            if self.owed:
                self.v["stage_ms"]["reference_owed"] = 1
        else:
            _, self.alone = self.ctx.reserve(want)
        for r, seq in asked:
            self.settle(r, lambda r=r, seq=seq: r.reply("cuda", seq))

    def take_host(self):
        """The reference host, where the zygote offers it: a shared evaluation that was
        offered none before admission asks again (the host may have become ready while
        it waited) and gives back its reference's share; the evaluation that creates the
        host uses it instead of its own reference runner."""
        if not self.host_role and self.shared is not None:
            self.host_role = self.ctx.host_ask(True)
            self.hosted = self.host_role == refhost.ASK_USE
            if self.hosted and self.gpu:
                self.ctx.reserve_less(self.ref_mb)
        if not self.host_role:
            return
        if self.hosted:
            self.owed = False      # no reference of its own to bring in
        self.v["stage_ms"]["reference_host"] = float(self.host_role)
        if self.hosted and self.shared is None:
            self.retry("reference_host", "the shared reference work was evicted before this evaluation could use it")
        self.R.kill()              # its own, forked for the task's description only
        if self.R.cpu_s is not None:
            self.v["stage_ms"]["cpu_reference"] = round(self.R.cpu_s * 1e3, 3)
        self.R = None
        if self.host_role == refhost.ASK_CREATE:
            self.bring_reference_memory()
            self.R = self.ctx.host_proc()
            try:
                self.R.hello()
            except (channel.ChannelClosed, channel.Malformed, TimeoutError) as e:
                self.retry("reference_host", f"a new reference host did not answer ({e})")

    def host_done(self):
        """The host this evaluation created is sound and needed here no more (after its
        window, else at its end): ready for the task's next evaluations, with none of this
        judge's buffers mapped."""
        if not self.host_sound:
            return
        self.host_sound = False
        self.R.hello(timeout=5.0)
        self.ctx.host_ok(self.mem.get("reference", 0.0) + admission.CONTEXT_MB)

    def borrow_host(self, t):
        """Inside the window: the host answers this judge now (what an earlier borrower
        left is dropped), is loaded with the task this evaluation's shared work came from,
        and gets the reference's buffer."""
        t0 = time.monotonic()
        hp = self.ctx.host_proc()
        try:
            info = hp.hello()
        except (channel.ChannelClosed, channel.Malformed, TimeoutError) as e:
            hp.kill()
            self.retry("reference_host", f"the reference host did not answer ({e})")
        self.R = hp
        if info.get("loaded") is not True:
            self.retry("reference_host", "the reference host was not loaded")
        if channel.held_count(info.get("held")) != self.shared.get("held_count"):
            self.task_fail("the reference host has another number of held-out input sets than "
                           "the evaluation whose work is shared")
        mb = info.get("min_bytes")
        self.min_bytes = mb if isinstance(mb, int) and not isinstance(mb, bool) and mb > 0 else None
        t.ref_buf = t.lend(hp, t.spec)
        self.v["stage_ms"]["window_borrow"] = round((time.monotonic() - t0) * 1e3, 3)
        return hp

    def return_host(self, t):
        """After a window that went through: the host lets the buffer go, and the zygote
        hears what it holds."""
        self.ask(self.R, "detach", buf=t.ref_buf)
        if self.gpu and self.mem.get("reference"):
            self.ctx.host_mem(self.mem["reference"] + admission.CONTEXT_MB)

    def bring_reference_memory(self):
        """Wait for the reference's share that admission left owed."""
        if self.owed:
            t0 = time.monotonic()
            self.ctx.reserve_more()
            self.v["stage_ms"]["reference_later_wait"] = round((time.monotonic() - t0) * 1e3, 3)
            self.owed = False

    def bring_reference(self, t):
        """The candidate passed against the shared outputs: the reference, loaded but idle
        so far, gets its memory and makes its first call (its one-time work: allocator,
        library handles, cuDNN's choices) before the window, where every other evaluation
        would wait for it."""
        self.stage("reference_later")
        self.bring_reference_memory()
        t.same_as_shared(self.ask(self.R, "call", inputs={"seed": self.rng.randrange(1 << 30)}, buf=None))

    def note_sandbox(self, walls):
        """The candidate's walls, as its runner saw them (informational: the judge's own
        checks do not depend on them)."""
        if isinstance(walls, dict) and walls.get("level") in ("full", "partial"):
            detail = str(walls.get("detail") or "")[:300]
            uid = walls.get("uid")
            if isinstance(uid, int):
                detail = "; ".join(x for x in (detail, f"uid {uid}", str(walls.get("uid_note") or "")[:200]) if x)
            self.v["env"]["sandbox"], self.v["env"]["sandbox_detail"] = walls["level"], detail

    def init_device(self):
        """The judge's buffers and computations: in the GPU's judge service when the zygote
        runs one (the judge then has no CUDA context), else in this process."""
        t0 = time.monotonic()
        self.ops = self.ctx.buffer_ops()
        self.info = self.ops.info() if self.gpu else {}
        if self.gpu:
            self.v["env"]["gpu_name"] = str(self.info.get("gpu_name") or "")[:120]
            self.v["stage_ms"]["judge_device"] = round((time.monotonic() - t0) * 1e3, 3)

    def precompile(self):
        """The candidate's kernels compiled before admission (kgharness.precompile): the
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
            rep = self.ask(self.C, "precompile", capability=[int(x) for x in cap])
        finally:
            self.ctx.precompiled()
        got = rep.get("precompile") if isinstance(rep.get("precompile"), dict) else {}
        for k in ("kernels", "launchers", "launchers_found"):
            if isinstance(got.get(k), int):
                self.v["stage_ms"][f"precompile_{k}"] = got[k]
        if isinstance(got.get("signatures"), list):
            # Names only: the zygote checks them and builds their launchers itself
            # (kgharness.launchers), for the runners that start after this one.
            self.ctx.launchers(got["signatures"])

    def find_shared(self):
        got = self.ops.shared(self.share_key)
        self.share_on = got.get("enabled") is True
        self.shared = got.get("entry") if isinstance(got.get("entry"), dict) else None
        self.publisher = got.get("publish") is True
        self.v["reference_shared"] = self.shared is not None
        # Published only once its screens passed (kgharness.trials): the reference works.
        self.v["reference_checked"] = self.shared is not None
        if not self.gpu:
            self.owed = self.shared is not None
        elif self.shared is None:
            self.bring_reference_memory()    # evicted while it waited: its reference does the work

    def timed(self):
        v, o = self.v, self.opts
        want = o["timing"] and (self.gpu or o["cpu_timing"])
        return bool(want) and v["status"] == "correct" and not v["hack_flags"]

    def conclude(self, failure):
        v = self.v
        if failure is None:
            v["status"] = "correct"
        else:
            where, res = failure
            v["status"] = "incorrect"
            v["feedback"] = f"mismatch in {where}: {res['msg']}"
            v["error_signature"] = "Mismatch: " + ("lazy output" if res.get("flag") else "output mismatch")
            if v["tolerance"]["dtype"] == "float32" and 1e-4 < res.get("scaled", 0) < 5e-2 and \
                    "tl.dot" in (self.job.get("code") or ""):
                v["feedback"] += ("\nThis looks like TF32 rounding in tl.dot: pass "
                                  "input_precision=\"ieee\" to tl.dot for full fp32 precision.")
        self.triton_policy()

    def triton_policy(self):
        """No launch of the submission's own Triton kernels: `decoy` when it defines some,
        `no_triton` when it defines none (unless require_triton is false)."""
        if self.launches > 0 or not self.opts["require_triton"]:
            return
        if self.used_compile:
            self.flag("compile_passthrough", "forward() ran torch.compile output and launched none "
                      "of the submission's own @triton.jit kernels")
        elif screen.defines_triton_kernel(self.job.get("code") or ""):
            self.flag("decoy", "forward() launched none of the submission's own @triton.jit kernels")
        else:
            self.flag("no_triton", "the submission launched no Triton kernel of its own; this "
                      "evaluation requires Triton (require_triton)")

    def final_checks(self):
        v = self.v
        if self.gpu and v["status"] == "correct":
            rep = self.ask(self.C, "coverage", seed=self.rng.randrange(1 << 30))
            cov = rep.get("coverage")
            v["coverage"] = float(cov) if isinstance(cov, (int, float)) and 0 <= cov <= 1 else None
            if self.used_compile and (v["coverage"] or 0.0) < 0.5:
                self.flag("compile_passthrough", "most GPU time is in torch.compile-generated kernels")
        if self.C is not None:
            rep = self.ask(self.C, "finish")
            w = rep.get("warnings")
            if isinstance(w, list):
                v["warnings"].extend(str(x)[:200] for x in w[:16] if str(x)[:200] not in v["warnings"])
        v["triton_launches"] = self.launches

    def footprint(self):
        """Device memory used so far (PROTOCOL.md, device_memory), or None off a GPU."""
        own = None
        if self.gpu and self.ops is not None:
            with contextlib.suppress(Exception):
                own = self.ops.held_bytes()
        if own is None:
            return None
        return {"reference_mb": round(self.mem.get("reference", 0.0), 1),
                "candidate_mb": round(self.mem.get("candidate", 0.0), 1),
                "judge_mb": round(own / (1 << 20), 1)}

    def close(self):
        self.stage(None)
        mem = self.footprint()
        if mem is not None:
            self.v["device_memory"] = mem
        if self.host_sound and not self.v.get("task_error") and not self.v.get("retry") and \
                self.v["status"] != "timeout":
            with contextlib.suppress(Exception):
                self.host_done()
        for r in (self.C, self.R):
            if r is not None:
                with contextlib.suppress(Exception):
                    r.kill()
                if r.cpu_s is not None:
                    self.v["stage_ms"][f"cpu_{r.role}"] = round(r.cpu_s * 1e3, 3)
        ru = resource.getrusage(resource.RUSAGE_SELF)
        self.v["stage_ms"]["cpu_judge"] = round((ru.ru_utime + ru.ru_stime) * 1e3, 3)
        if self.ops is not None:
            self.ops.close()
        if self.details:
            detail = "; ".join(f"{f}: {d}" for f, d in self.details[:6])
            self.v["feedback"] = (self.v["feedback"] + "\n" if self.v["feedback"] else "") + \
                f"reward hack checks failed: {detail}"
        if self.v["status"] not in STATUSES:
            self.v["status"] = "harness_error"

def _triton_version():
    try:
        import triton
        return triton.__version__
    except Exception:
        return ""


def evaluate(job, ctx):
    """Evaluate one job in this (judge) process; always a finalized verdict, never raises."""
    return Judge(job, ctx).run()
