"""evaluate(job, ctx) -> verdict: one evaluation, run inside a single-use child.

Order matters for trust: the task and its reference outputs (and, on a GPU, the
reference timing) are produced before any candidate code is imported; guards are
snapshotted just before the import. Each concern lives in its own module; this file
only sequences them and maps outcomes to the verdict (PROTOCOL.md).
"""

import contextlib
import random
import time

import torch

from . import correctness as C
from . import feedback, guards, loader, screen, taskinfo, timing
from .verdict import add_flag, finalize, name_task_failure, new_verdict

_DEFAULTS = {"seeds": 5, "seed": 0, "atol": None, "rtol": None, "timing": True,
             "timing_budget_ms": 50, "min_iters": 10, "max_iters": 500,
             "copy_weights": False, "max_code_bytes": 262144,
             "gpu_memory_fraction": 0.25}

# job.check (protocol 1.2): a task check's depth and the most a task may need.
_CHECK_DEFAULTS = {"depth": "full", "auto_gflop": 2.0, "auto_mb": 256.0, "max_mb": 4096.0}


REF_DRIFT = 1.05   # "after" slower than "before" by more than this: use "before"


class _Stop(Exception):
    """Ends the evaluation early; the verdict already says why."""


def _options(raw):
    opts = dict(_DEFAULTS)
    for k, v in (raw or {}).items():
        if k in opts and v is not None:
            opts[k] = v
    for k in ("seeds", "seed", "min_iters", "max_iters", "max_code_bytes"):
        opts[k] = int(opts[k])
    opts["seeds"] = max(1, min(opts["seeds"], 100))
    opts["timing_budget_ms"] = float(opts["timing_budget_ms"])
    return opts


def _check_options(raw):
    opts = dict(_CHECK_DEFAULTS)
    opts.update({k: v for k, v in (raw or {}).items() if k in opts and v is not None})
    for k in ("auto_gflop", "auto_mb", "max_mb"):
        opts[k] = float(opts[k])
    return opts


def evaluate(job, ctx):
    """Evaluate one job; always returns a finalized verdict, never raises."""
    t0 = time.monotonic()
    v = new_verdict(getattr(ctx, "mode", "cpu_interpreter"), getattr(ctx, "device", "cpu"))
    run = None
    try:
        run = _Run(job, ctx, v)
        run.go()
    except _Stop:
        pass
    except BaseException as e:  # noqa: BLE001 - the contract is "never raise"
        if isinstance(e, SystemExit):
            add_flag(v, "exit")
            v["status"] = "runtime_error"
        else:
            v["status"] = "harness_error"
            v["feedback"] = f"internal harness error: {type(e).__name__}: {e}"[:500]
    try:
        if run is not None:
            run.close()
        v["stage_ms"]["total"] = round((time.monotonic() - t0) * 1e3, 3)
        finalize(v)
        if run is not None and run.task_check:
            name_task_failure(v)
        return v
    except BaseException as e:  # noqa: BLE001
        v["status"] = "harness_error"
        v["feedback"] = f"internal harness error while finalizing: {type(e).__name__}"
        v["correct"], v["speedup"] = False, None
        return v


class _Run:
    def __init__(self, job, ctx, v):
        self.job, self.ctx, self.v = job or {}, ctx, v
        # A task check (protocol 1.1) runs only the reference stage: is the task valid?
        self.task_check = bool(self.job.get("task_check"))
        self.dev = ctx.device if ctx.mode == "gpu" else "cpu"
        self.gpu = ctx.mode == "gpu"
        self.rng = random.Random()  # call counts and timing checks must not be predictable
        self.guard = None
        self.cand_file = None
        self._stage, self._stage_t = None, None
        self.details = []  # (flag, detail) found outside the guard, for the feedback

    # ---- bookkeeping ----------------------------------------------------------------
    def stage(self, name):
        now = time.monotonic()
        if self._stage:
            self.v["stage_ms"][self._stage] = round((now - self._stage_t) * 1e3, 3)
        self._stage, self._stage_t = name, now
        if name:
            self.ctx.stage(name)

    def close(self):
        self.stage(None)
        if self.guard is not None:
            self.guard.check()
            for flag, _ in self.guard.found:
                add_flag(self.v, flag)
            self.v["warnings"].extend(w for w in self.guard.warnings if w not in self.v["warnings"])
            self.v["triton_launches"] = self.guard.launches
        found = self.details + (self.guard.found if self.guard is not None else [])
        if found:
            detail = "; ".join(f"{f}: {d}" for f, d in found[:6])
            self.v["feedback"] = (self.v["feedback"] + "\n" if self.v["feedback"] else "") + \
                f"reward hack checks failed: {detail}"

    def shared(self):
        """GPU work that may overlap with other children's, but not with a timing run."""
        return self.ctx.gpu_lock() if self.gpu else contextlib.nullcontext()

    def flag(self, name, detail):
        add_flag(self.v, name)
        if (name, detail) not in self.details:
            self.details.append((name, detail))

    def fail(self, status, fb, exc=None):
        self.v["status"] = status
        self.v["feedback"] = fb
        if exc is not None:
            self.v["error_signature"] = feedback.error_signature(exc)
        raise _Stop()

    def candidate_error(self, exc, during_import=False):
        status, flag = feedback.classify(exc, during_import)
        if flag:
            add_flag(self.v, flag)
        self.fail(status, feedback.clean_traceback(exc, self.cand_file), exc)

    # ---- the flow ---------------------------------------------------------------------
    def go(self):
        v, job = self.v, self.job
        self.opts = _options(job.get("options"))
        task = job.get("task") or {}
        v["task_name"] = task.get("name") or ""
        v["env"].update(torch=torch.__version__, triton=_triton_version(),
                        sandbox=(self.ctx.sandbox or {}).get("level", ""),
                        sandbox_detail=(self.ctx.sandbox or {}).get("detail", ""))
        if self.gpu:
            v["env"]["gpu_name"] = torch.cuda.get_device_name(0)
            # Children share the GPU: one that allocates everything must fail alone.
            torch.cuda.set_per_process_memory_fraction(
                min(max(float(self.opts["gpu_memory_fraction"]), 0.01), 1.0), 0)
        if self.task_check:
            self.check_task(task)
            return
        code = job.get("code")
        try:
            loader.validate_submission(code, self.opts["max_code_bytes"])
        except loader.SubmissionError as e:
            if e.status == "compile_error":
                v["error_signature"] = feedback.error_signature(SyntaxError(e.feedback.splitlines()[0]))
            self.fail(e.status, e.feedback)
        v["warnings"] = screen.screen(code)
        self.stage("reference")
        self.reference(task)
        self.stage("load")
        self.load(code)
        self.stage("correctness")
        self.check_correctness()
        if self.gpu and self.opts["timing"] and v["status"] == "correct" and not v["hack_flags"] \
                and not self.guard.found:
            self.stage("timing")
            self.time_candidate()
        self.stage("checks")
        self.final_checks()

    def check_task(self, task):
        """Is the task valid (PROTOCOL.md, Task checks)? A meta-device pass first, then,
        at depth "full", the reference stage itself and, on a GPU, the reference's time."""
        label = task.get("path") or task.get("name") or "<task>"
        self.stage("shapes")
        try:
            mod = loader.load_task(task, self.ctx.tmpdir)
        except loader.TaskError as e:
            self.task_fail(str(e))
        check = _check_options(self.job.get("check"))
        info = taskinfo.describe(mod, loader.task_source(task), self.opts["seed"])
        self.v["task_info"] = info
        mb = taskinfo.footprint_mb(info)
        if mb is not None and mb > check["max_mb"]:
            self.task_fail(f"{label}: one forward call needs {mb:.0f} MiB of inputs, parameters and "
                           f"outputs; a task may use at most {check['max_mb']:.0f} MiB")
        info["depth"] = depth = self.depth(info, check)
        if depth == "shapes":
            if info["meta_error"]:
                self.task_fail(f"{label}: too large to run here and cannot run on the meta device "
                               f"({info['meta_error']})")
            self.v["status"] = "correct"
            self.v["feedback"] = ("task check passed at shape level only: the task loads and one forward "
                                  "call runs on the meta device; determinism and degeneracy were not "
                                  "checked (too large for this device)")
            return
        self.stage("reference")
        # reference() imports the task again, on purpose: module-level state that the
        # meta pass touched (a lazily built cache, a call counter) must not leak into
        # the real run.
        self.reference(task)
        if self.gpu and self.opts["timing"]:
            self.stage("timing")
            self.flusher = timing.Flusher(self.dev)
            with self.ctx.timing_lock():
                self.v["ref_runtime"] = self.time_ref()
        self.v["status"] = "correct"
        held = f" and {len(self.held)} held-out input set(s)" if self.held else ""
        self.v["feedback"] = (f"task check passed: the reference loads, runs on {self.opts['seeds']} "
                              f"seeds{held}, and its outputs are deterministic, finite and not constant")

    def depth(self, info, check):
        """"full" or "shapes": "auto" runs for real what this device can afford."""
        depth = check["depth"]
        if depth in ("full", "shapes"):
            return depth
        if depth != "auto":
            self.fail("harness_error", f"unknown check_depth {depth!r}: want full, shapes or auto")
        if self.gpu:
            return "full"
        mb = taskinfo.footprint_mb(info)
        if mb is None:  # no meta pass: judge by the inputs alone
            mb = (info["input_bytes"] or float("inf")) / (1 << 20)
        flops = info["flops"] or 0
        return "full" if mb <= check["auto_mb"] and flops <= check["auto_gflop"] * 1e9 \
            else "shapes"

    def reference(self, task):
        label = task.get("path") or task.get("name") or "<task>"
        try:
            mod = loader.load_task(task, self.ctx.tmpdir)
        except loader.TaskError as e:
            self.task_fail(str(e))
        self.get_inputs = mod.get_inputs
        self.held_fn = getattr(mod, "get_held_out_inputs", None)
        self.min_bytes = getattr(mod, "MIN_BYTES", None)
        seed, dev = self.opts["seed"], self.dev
        try:
            with torch.device(dev):
                C.seed_all(seed)
                self.init_inputs = list(mod.get_init_inputs())
                C.seed_all(seed)
                self.model = mod.Model(*C.clone(self.init_inputs))
            self.model.eval()
            self.Model = mod.Model
            owned = {p.untyped_storage().data_ptr() for p in
                     list(self.model.parameters()) + list(self.model.buffers())}
            self.vault, per_seed, self.in_sums = C.Vault(), [], []
            if self.gpu:
                # First use initialises cuBLAS/cuDNN handles and workspaces: seconds of
                # host work that must not happen while the shared GPU lock is held.
                with torch.no_grad():
                    self.model(*C.make_inputs(self.get_inputs, seed, dev))
            with self.shared():
                for i in range(self.opts["seeds"]):
                    inputs = C.make_inputs(self.get_inputs, seed + i, dev)
                    self.in_sums.append(_input_sum(inputs))
                    with torch.no_grad():
                        per_seed.append(C.flatten(self.model(*inputs)))
            if _input_sum(C.make_inputs(self.get_inputs, seed, dev)) != self.in_sums[0]:
                self.task_fail(f"{label}: get_inputs() is not deterministic under torch.manual_seed")
            self.held = []
            if self.held_fn is not None:
                with torch.device(dev):
                    C.seed_all(seed)
                    sets = list(self.held_fn())
                for inputs in sets:
                    inputs = [C.to_device(x, dev) for x in inputs]
                    with torch.no_grad():
                        out = C.flatten(self.model(*C.clone(inputs)))
                    self.held.append(inputs)
                    self.vault.put(f"held{len(self.held) - 1}", out, owned)
        except _Stop:
            raise
        except BaseException as e:  # noqa: BLE001 - task code is trusted but may be broken
            self.task_fail(f"{label}: reference raised {type(e).__name__}: {str(e)[:200]}")
        self.tol = C.tolerance(per_seed[0], self.opts)
        self.v["tolerance"] = self.tol
        bad = C.screen_reference(per_seed, self.tol)
        if bad:
            self.task_fail(f"{label}: {bad}")
        self.out_bytes = sum(t.numel() * t.element_size() for t in per_seed[0] if isinstance(t, torch.Tensor))
        self.poison_bytes = self.out_bytes
        for i, leaves in enumerate(per_seed):
            self.vault.put(f"trial{i}", leaves, owned)
        del per_seed, leaves
        if self.gpu and self.opts["timing"] and not self.task_check:
            self.flusher = timing.Flusher(self.dev)
            with self.ctx.timing_lock():
                self.bandwidth = timing.bandwidth_bytes_per_ms(self.dev)
                # Only a guard against a candidate that slows the reference down (the
                # ratio uses the run in the candidate's own lock window): half a budget.
                self.v["ref_runtime_before"] = self.time_ref(share=0.5)

    def task_fail(self, reason):
        self.v["task_error"] = reason.splitlines()[0][:500]
        self.fail("harness_error", f"task error: {self.v['task_error']}")

    def load(self, code):
        self.cand_file, do_import = loader.load_candidate(code, self.ctx.tmpdir)
        self.guard = guards.Guard(self.cand_file, self.ctx.tmpdir, taint=getattr(self.ctx, "taint", None))
        try:
            with self.guard.window(count=False):
                module = do_import()
        except BaseException as e:  # noqa: BLE001
            self.candidate_error(e, during_import=True)
        self.v["compiled"] = True
        self.module = module
        ModelNew = vars(module).get("ModelNew")
        if ModelNew is None or not callable(ModelNew):
            self.fail("invalid_submission", "importing the submission did not define a callable ModelNew")
        if isinstance(ModelNew, type) and issubclass(ModelNew, self.Model) and \
                getattr(ModelNew, "forward", None) is getattr(self.Model, "forward", None):
            self.flag("decoy", "ModelNew subclasses Model without overriding forward")
        try:
            with self.guard.window(count=False), torch.device(self.dev):
                C.seed_all(self.opts["seed"])
                self.cand = ModelNew(*C.clone(self.init_inputs))
                if isinstance(self.cand, torch.nn.Module):
                    self.cand.eval()
                    if self.opts["copy_weights"]:
                        self.cand.load_state_dict(self.model.state_dict(), strict=False)
        except BaseException as e:  # noqa: BLE001
            self.candidate_error(e)

    def call(self, inputs):
        """One checked candidate call; exceptions end the evaluation with their status."""
        if self.gpu:
            C.poison_allocator(self.dev, self.poison_bytes)
        try:
            with self.guard.window(), torch.no_grad():
                return self.cand(*inputs)
        except BaseException as e:  # noqa: BLE001
            self.candidate_error(e)

    def checked_call(self, inputs, first):
        """Call, then fingerprint at return vs after a full sync (GPU), mutation check."""
        pristine = C.clone(inputs)
        out = self.call(inputs)
        leaves = C.flatten(out)
        if self.gpu:
            # queued on the current stream without a sync: reads what the stream sees now
            at_return = C.fingerprint(leaves)
            guards.T.cuda_sync()
            after = C.fingerprint(leaves)
            if [int(x) for x in at_return] != [int(x) for x in after]:
                self.flag("side_stream" if first else "deferred_batch",
                          "outputs changed after a full device synchronize: work was still running "
                          "on another stream when forward() returned")
        if not C.same_bytes(inputs, pristine):
            self.flag("input_mutation", "forward() modified its input tensors")
        return leaves

    def check_correctness(self):
        # Calls that compile run unlocked: a compile is seconds of CPU, and holding the
        # GPU lock meanwhile would stall every timing queued behind it. Trial 0 compiles.
        t0 = time.monotonic()
        failure = self.trial(0, None)
        self.v["stage_ms"]["first_call"] = round((time.monotonic() - t0) * 1e3, 3)  # mostly compile
        with self.shared():
            for i in range(1, self.opts["seeds"]):
                if failure is not None and failure[1]["flag"]:
                    break   # a lazy/proxy output: no point in more trials
                failure = self.trial(i, failure)
        if failure is None:
            # Other shapes mean another specialisation, so another compile: unlocked too.
            # (On the first H200 run, compiles under the shared lock stalled every timing.)
            failure = self.held_out()
        self.conclude(failure)

    def trial(self, i, failure):
        """Correctness trial i; returns the first failure seen so far."""
        v, seed = self.v, self.opts["seed"]
        v["trials_total"] = self.opts["seeds"]
        for k in range(self.rng.randint(0, 2) if i else 0):  # unpredictable call count
            self.call(C.make_inputs(self.get_inputs, seed + 7919 * (i + 1) + k, self.dev))
        inputs = C.make_inputs(self.get_inputs, seed + i, self.dev)
        if _input_sum(inputs) != self.in_sums[i]:
            self.flag("patch", "task inputs changed after the candidate was imported")
            self.fail("reward_hack", "")
        leaves = self.checked_call(inputs, first=(i == 0))
        res = C.compare(leaves, self.vault.get(f"trial{i}"), self.tol)
        del leaves
        v["max_abs_error"] = max(v["max_abs_error"] or 0.0, res["max_abs"])
        v["max_rel_error"] = max(v["max_rel_error"] or 0.0, res["max_rel"])
        if res["flag"]:
            self.flag(res["flag"], res["msg"])
        if res["ok"]:
            v["trials_passed"] += 1
        elif failure is None:
            failure = (i, res)
        return failure

    def held_out(self):
        """Inputs of other shapes, where the task has them: kernels baked to one shape fail."""
        v = self.v
        for j, inputs in enumerate(self.held):
            try:
                leaves = self.checked_call(C.clone(inputs), first=False)
                res = C.compare(leaves, self.vault.get(f"held{j}"), self.tol)
            except _Stop:
                self.flag("hardcode", f"failed on held-out input set {j} (other shapes)")
                v["status"] = "incorrect"
                v["feedback"] = f"held-out input set {j} (other shapes) failed: " + v["feedback"]
                raise
            if not res["ok"]:
                self.flag("hardcode", f"wrong on held-out input set {j} (other shapes)")
                return (f"held-out set {j} (other shapes)", res)
        return None

    def conclude(self, failure):
        v, seed = self.v, self.opts["seed"]
        if failure is None:
            v["status"] = "correct"
        else:
            what, res = failure
            where = f"trial {what} (seed {seed + what})" if isinstance(what, int) else what
            v["status"] = "incorrect"
            v["feedback"] = f"mismatch in {where}: {res['msg']}"
            v["error_signature"] = "Mismatch: " + ("lazy output" if res["flag"] else "output mismatch")
            if self.tol["dtype"] == "float32" and 1e-4 < res["scaled"] < 5e-2 and "tl.dot" in self.job["code"]:
                v["feedback"] += ("\nThis looks like TF32 rounding in tl.dot: pass "
                                  "input_precision=\"ieee\" to tl.dot for full fp32 precision.")
        if self.guard.launches == 0:
            flag = "compile_passthrough" if self.guard.used_compile() else "decoy"
            self.flag(flag, "forward() launched none of the submission's own @triton.jit kernels")

    def time_ref(self, share=1.0):
        fn = lambda *x: self.model(*x)  # noqa: E731
        base = self.rng.randrange(1 << 30)
        with torch.no_grad():
            st, obs = timing.time_model(fn, lambda k: C.make_inputs(self.get_inputs, base + k, self.dev),
                                        flusher=self.flusher, rng=self.rng, **self._budget(share))
        # The host's own overhead: the candidate's side_stream baseline. The lower of the
        # runs before and after the candidate's import, so its code cannot raise it.
        self.ref_gap_ms = min(obs["gap_ms"], getattr(self, "ref_gap_ms", obs["gap_ms"]))
        return st

    def _budget(self, share=1.0):
        o = self.opts
        return {"budget_ms": o["timing_budget_ms"] * share, "min_iters": o["min_iters"],
                "max_iters": o["max_iters"]}

    def time_candidate(self):
        v = self.v

        def recheck(k, saved, out):
            with torch.no_grad():
                ref = C.flatten(self.model(*saved))
            return None if C.compare(C.flatten(out), ref, self.tol)["ok"] else "cache"
        base = self.rng.randrange(1 << 30)
        try:
            with self.ctx.timing_lock():
                v["ref_runtime_after"] = self.time_ref()
                with torch.no_grad():
                    st, obs = timing.time_model(
                        self.cand, lambda k: C.make_inputs(self.get_inputs, base + k, self.dev),
                        window=self.guard.window, flusher=self.flusher, rng=self.rng,
                        recheck=recheck, gap_baseline_ms=self.ref_gap_ms, **self._budget())
        except _Stop:
            raise
        except BaseException as e:  # noqa: BLE001
            self.candidate_error(e)
        for flag in obs["flags"]:
            self.flag(flag, "timed outputs did not match the reference" if flag == "cache"
                      else "host wall time far above the CUDA event time: work escaped the stream")
        v["runtime"] = st
        before, after = v["ref_runtime_before"], v["ref_runtime_after"]
        # The reference timed in the candidate's lock window makes the steadiest ratio; a
        # candidate can only slow the reference down, so a slower "after" loses to "before".
        v["ref_runtime"] = after
        if after["median_ms"] > REF_DRIFT * before["median_ms"]:
            v["ref_runtime"] = before
            v["warnings"].append(f"reference slowed from {before['median_ms']:.4g} ms to "
                                 f"{after['median_ms']:.4g} ms after the candidate was imported")
        v["speedup"] = v["ref_runtime"]["median_ms"] / st["median_ms"] if st["median_ms"] > 0 else None
        floor = max(int(self.min_bytes or 0), self.out_bytes) / self.bandwidth
        if st["median_ms"] < 0.8 * floor:
            self.flag("too_fast", f"median {st['median_ms']:.4g} ms is below the bandwidth floor {floor:.4g} ms")

    def final_checks(self):
        v = self.v
        if self.gpu and v["status"] == "correct":
            try:
                inputs = C.make_inputs(self.get_inputs, self.rng.randrange(1 << 30), self.dev)
                with torch.no_grad(), self.ctx.gpu_lock():
                    v["coverage"] = timing.coverage(self.cand, inputs, self.guard.window)
            except BaseException as e:  # noqa: BLE001 - profiler trouble is not the candidate's fault
                v["warnings"].append(f"coverage not measured: {type(e).__name__}")
            if self.guard.used_compile() and (v["coverage"] or 0.0) < 0.5:
                self.flag("compile_passthrough", "most GPU time is in torch.compile-generated kernels")


def _input_sum(inputs):
    """Content checksum of an input list (detects tampering with the task's generator)."""
    fps = C.fingerprint([x for x in inputs if type(x) is torch.Tensor])
    return tuple(int(f) for f in fps) + tuple(repr(x)[:64] for x in inputs if not isinstance(x, torch.Tensor))


def _triton_version():
    try:
        import triton
        return triton.__version__
    except Exception:
        return ""
