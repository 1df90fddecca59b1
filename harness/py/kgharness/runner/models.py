"""A runner's models: the task imported and its `Model` built (the reference), or the task
imported for its inputs and the submission's `ModelNew` built under the guards (the
candidate); the CUDA context made once before either; the candidate's kernels compiled
ahead (kgharness.runner.precompile). The requests precompile, cuda and load
(kgharness.runner.handler)."""

import time

import torch

from .. import guards, options
from .. import inputs as I
from ..sandbox import walls
from . import loader, precompile, taskinfo


class Stop(Exception):
    """A failure the runner reports and then waits to be killed."""

    def __init__(self, **reply):
        super().__init__(reply.get("feedback", ""))
        self.reply = reply


class Models:
    """`runner` is the kgharness.runner.handler.Runner whose state the models are."""

    def __init__(self, runner):
        self.runner = runner

    def precompile(self, req, _fds):
        r = self.runner
        if r.role != "candidate" or torch.cuda.is_initialized():
            return {"ok": False, "status": "harness_error",
                    "feedback": "precompile: the candidate's, before its CUDA context"}
        cap = req.get("capability")
        if not (isinstance(cap, list) and len(cap) == 2 and all(isinstance(x, int) for x in cap)):
            return {"ok": False, "status": "harness_error", "feedback": "precompile: capability must be [major, minor]"}
        limit = MAX_AUTOTUNE_CONFIGS if r.gpu else 1
        return {"precompile": precompile.run(r.tmpdir, r.job, cap, r.seed, lambda w: cap_autotune(w, limit),
                                             wait_s=precompile.wait_s(r.job.get("options"), r.gpu))}

    def load(self, req, _fds):
        r = self.runner
        task = r.job.get("task") or {}
        try:
            mod = loader.load_task(task, r.tmpdir)
        except loader.TaskError as e:
            raise Stop(task_error=str(e))
        r.get_inputs = mod.get_inputs
        out = {"sandbox": r.sandbox}
        if r.role == "reference" and req.get("describe"):
            out["task_info"] = taskinfo.describe(mod, loader.task_source(task), r.seed)
            if req.get("describe_only"):
                return out
        self.cuda(req, _fds)
        t1 = time.monotonic()
        with torch.device(r.dev):
            I.seed_all(r.seed)
            init_inputs = list(mod.get_init_inputs())
        if r.role == "reference":
            r.model = self.build_reference(mod, init_inputs, warm=req.get("warm") is not False)
        else:
            r.model = self.build_candidate(mod, init_inputs)
        r.held = self.held_sets(mod)
        # Where the load's time went (diagnostics only: stage_ms, never a decision).
        out["phases_ms"] = {"sandbox": r.sandbox_ms, "cuda": r.cuda_ms or 0.0,
                            "build": round((time.monotonic() - t1) * 1e3, 3)}
        if r.warm_ms is not None:
            out["phases_ms"]["warm"] = r.warm_ms
        out.update(held=len(r.held), min_bytes=_int_or_none(getattr(mod, "MIN_BYTES", None)))
        r.loaded = {"held": out["held"], "min_bytes": out["min_bytes"]}
        return out

    def cuda(self, _req, _fds):
        """The CUDA context, once; before the task's or the submission's code is built."""
        r = self.runner
        if r.gpu and r.cuda_ms is None:
            t0 = time.monotonic()
            torch.cuda.init()
            torch.zeros(1, device=r.dev)
            self.limit_memory()
            r.cuda_ms = round((time.monotonic() - t0) * 1e3, 3)
        return {}

    def build_reference(self, mod, init_inputs, warm=True):
        """The reference model; warm: one forward call on a full set of inputs (its
        cuBLAS/cuDNN handles and workspaces made here, not in a timed call). Not when the
        judge was admitted without the reference's memory (kgharness.zygote.admission, the
        reference later): that call would hold a set of inputs in this process's cache,
        outside every reservation (H200: 14 GiB per row_l3_norm evaluation owing its
        reference, and the GPU at 139 GiB); the judge makes it once the memory is there."""
        r = self.runner
        try:
            with torch.device(r.dev):
                I.seed_all(r.seed)
                model = mod.Model(*I.clone(init_inputs))
            model.eval()
            if warm:
                t0 = time.monotonic()
                with torch.no_grad():
                    model(*I.make_inputs(r.get_inputs, r.seed, r.dev))
                if r.gpu:
                    torch.cuda.synchronize()
                r.warm_ms = round((time.monotonic() - t0) * 1e3, 3)
        except Stop:
            raise
        except BaseException as e:  # noqa: BLE001
            raise Stop(**r.failure(e))
        return model

    def limit_memory(self):
        """The candidate is held to gpu_memory_fraction of the GPU: one that allocates
        everything fails alone. The reference is not capped: its share in the reservation
        (kgharness.zygote.admission) sizes the admission only (measured on an H200: capping the
        reference at twice its shapes' bytes ran 58 references out of memory)."""
        r = self.runner
        if r.role != "candidate":
            return
        frac = options.gpu_memory_fraction(r.opts)
        r.mem_cap = min(max(frac, 0.01), 1.0)
        torch.cuda.set_per_process_memory_fraction(r.mem_cap, 0)

    def build_candidate(self, mod, init_inputs):
        r = self.runner
        code = r.job.get("code")
        r.cand_file, do_import = loader.load_candidate(code, r.tmpdir)
        private = ("/tmp", "/dev/shm") if walls.private_active() else ()
        r.guard = guards.Guard(r.cand_file, r.tmpdir, taint=r.taint, writable=private)
        cap_autotune(r.guard.warnings, MAX_AUTOTUNE_CONFIGS if r.gpu else 1)
        try:
            with r.guard.window(count=False):
                module = do_import()
        except BaseException as e:  # noqa: BLE001
            raise Stop(**r.failure(e, during_import=True))
        ModelNew = vars(module).get("ModelNew")
        if ModelNew is None or not callable(ModelNew):
            raise Stop(status="invalid_submission",
                       feedback="importing the submission did not define a callable ModelNew")
        if isinstance(ModelNew, type) and issubclass(ModelNew, mod.Model) and \
                getattr(ModelNew, "forward", None) is getattr(mod.Model, "forward", None):
            r.guard._add("decoy", "ModelNew subclasses Model without overriding forward")
        try:
            with r.guard.window(count=False), torch.device(r.dev):
                I.seed_all(r.seed)
                model = ModelNew(*I.clone(init_inputs))
                if isinstance(model, torch.nn.Module):
                    model.eval()
                    if r.opts.get("copy_weights"):
                        with torch.device(r.dev):
                            I.seed_all(r.seed)
                            ref = mod.Model(*I.clone(init_inputs))
                        model.load_state_dict(ref.state_dict(), strict=False)
        except BaseException as e:  # noqa: BLE001
            raise Stop(**r.failure(e))
        return model

    def held_sets(self, mod):
        r = self.runner
        fn = getattr(mod, "get_held_out_inputs", None)
        if fn is None:
            return []
        try:
            with torch.device(r.dev):
                I.seed_all(r.seed)
                sets = list(fn())
            return [[I.to_device(x, r.dev) for x in s] for s in sets]
        except BaseException as e:  # noqa: BLE001
            if r.role == "reference":
                raise Stop(task_error=f"get_held_out_inputs raised {type(e).__name__}: {str(e)[:200]}")
            raise


def _int_or_none(v):
    return int(v) if isinstance(v, int) and not isinstance(v, bool) and v > 0 else None


# @triton.autotune keeps at most this many configs in the candidate's process (docs/protocol.md,
# compile_timeout_s): each config is one more compile and benchmark inside the compile
# budget. A courtesy to honest kernels, not a wall: code that reaches the autotuner another
# way only risks compile_timeout. On a CPU it keeps one: the interpreter has no driver to
# benchmark with (more configs are a runtime_error there), and one config is not benchmarked.
MAX_AUTOTUNE_CONFIGS = 16


def cap_autotune(warnings, limit=MAX_AUTOTUNE_CONFIGS):
    """Wrap triton.autotune so a longer configs list is cut to limit, with a verdict
    warning saying so."""
    import triton
    orig = triton.autotune
    if getattr(orig, "_kg_capped", False):
        return

    def autotune(configs, *args, **kwargs):
        configs = list(configs)
        if len(configs) > limit:
            msg = (f"@triton.autotune listed {len(configs)} configs; kernelgate kept the first {limit} "
                   + ("(each is a compile inside the compile budget)" if limit > 1 else
                      "(Triton's CPU interpreter cannot benchmark configs)"))
            if msg not in warnings:
                warnings.append(msg)
            configs = configs[:limit]
        return orig(configs, *args, **kwargs)

    autotune._kg_capped = True
    triton.autotune = autotune
