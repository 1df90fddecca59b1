"""A runner: the process that runs one side of an evaluation, on the judge's orders.

There are two per evaluation, forked by the judge before it touches CUDA: the
`reference` runner imports the task and runs `Model`; the `candidate` runner imports
the task (for its inputs) and the submission, and runs `ModelNew`. Both are hostile
(a task registered over the API is untrusted too): nothing a runner says decides a
verdict in its favour. A runner computes, writes its outputs into the judge's
exchange buffers, times itself, and reports what its detectors saw; the judge
compares, cross-checks and decides (kgharness.judge).

One request, one reply (kgharness.channel). Requests:

  precompile {capability}   compile the candidate's Triton kernels and launchers into its
                            cache, in a child with no GPU access (kgharness.precompile;
                            before admission, so before any CUDA context here)
  cuda                      make this process's CUDA context now (before load, while the
                            judge waits for device memory; harness code only)
  load                      import, build the model; the reference says how many held-out
                            sets the task has, its MIN_BYTES and, when asked, task_info
  attach {buf, handle, spec} map an exchange buffer laid out for `spec`
  call {inputs, buf?, keep?, same_storage?}
                            run once on inputs {"seed": s} or {"held": j}; reply with the
                            output spec; write the outputs into buf when they fit its spec.
                            keep: hold these inputs for the next call; same_storage: write
                            this call's input values into the inputs held (the same tensors
                            at the same addresses) and run on those
  write {buf}               write the last call's outputs into buf
  go {seed, buf, head_ms?}  one timed iteration on fresh inputs of seed, made inside the
                            request (its own clock, after a head start of head_ms), outputs
                            into buf; says how long its launches took
  coverage {seed}           share of GPU time in the candidate's own kernels (detector)
  exact {seed, atol, rtol}  a task check's float64 pass: how far the reference is from its
                            exact answer (kgharness.exactness); the reference only
  finish                    the detectors' last word
  hello {nonce}             a reference host's borrower starts (kgharness.refhost): every
                            buffer an earlier borrower attached is let go; says whether
                            the task is loaded, its held-out count and MIN_BYTES
  detach {buf}              let one buffer go
"""

import gc
import time
import traceback

import torch

from . import exactness, exchange, feedback, guards, loader, precompile, sandbox, taskinfo, timing
from . import inputs as I
from .guards import T


class Stop(Exception):
    """A failure the runner reports and then waits to be killed."""

    def __init__(self, **reply):
        super().__init__(reply.get("feedback", ""))
        self.reply = reply


class Runner:
    def __init__(self, role, job, mode, device, tmpdir, taint=None):
        self.role, self.job, self.mode, self.tmpdir = role, job, mode, tmpdir
        self.gpu = mode == "gpu"
        self.dev = device if self.gpu else "cpu"
        self.opts = job.get("options") or {}
        self.seed = int(self.opts.get("seed") or 0)
        self.taint = taint
        self.guard = None
        self.cand_file = None
        self.buffers = {}           # id -> (views, spec)
        self.kept = None            # leaves of the last call, for `write`
        self.kept_inputs = None     # the last call's inputs, when the judge asked to keep them
        self.flusher = None
        self.reported = 0           # guard findings already sent
        self.sandbox = None         # what held of the walls (kgharness.spawn), for the verdict
        self.mem_cap = 1.0          # share of the GPU this process may hold (limit_memory)
        self.sandbox_ms = 0.0       # how long its walls took to put up (kgharness.spawn)
        self.cuda_ms = None         # how long its CUDA context took, once made
        self.warm_ms = None         # how long the reference's warm-up call took, if it made one
        self.loaded = None          # a reference host's answer to hello, once loaded

    # ---- dispatch -------------------------------------------------------------------
    def handle(self, req, fds):
        op = req.get("op")
        fn = getattr(self, "op_" + op, None) if isinstance(op, str) and op.isidentifier() else None
        if fn is None:
            return {"ok": False, "status": "harness_error", "feedback": f"unknown request {op!r}"}
        try:
            out = fn(req, fds)
        except Stop as s:
            out = dict(s.reply, ok=False)
        except BaseException as e:  # noqa: BLE001 - whatever broke, the judge hears why
            out = self.failure(e)
        out.setdefault("ok", True)
        out["flags"] = self.new_flags()
        if self.gpu and torch.cuda.is_initialized():
            # What this process holds on the device, for admission by memory (kgharness.judge).
            out["mem_peak_mb"] = round(torch.cuda.max_memory_reserved() / (1 << 20), 1)
        if self.guard is not None:
            out["launches"] = self.guard.launches
            out["used_compile"] = self.guard.used_compile()
        return out

    def failure(self, exc, during_import=False):
        oom = feedback.is_device_oom(exc)
        if self.role == "reference":
            return {"ok": False, "task_error": f"the reference raised {type(exc).__name__}: "
                    f"{str(exc)[:200]}", "trace": traceback.format_exc()[-1500:], "oom": oom}
        status, flag = feedback.classify(exc, during_import)
        out = {"ok": False, "status": status, "feedback": feedback.clean_traceback(exc, self.cand_file),
               "error_signature": feedback.error_signature(exc)}
        if oom:
            # Was it this process's own doing? What it held plus what it asked for, against
            # its share of the GPU: a request beyond its own cap is its own doing.
            held = torch.cuda.memory_reserved() if torch.cuda.is_initialized() else 0
            total = torch.cuda.get_device_properties(0).total_memory if torch.cuda.is_initialized() else 1
            held += feedback.oom_request_bytes(exc)
            return dict(out, oom=True, own_share=held / total, cap=self.mem_cap)
        if flag:
            self.flag(flag, f"{type(exc).__name__} during the call")
        return out

    def flag(self, name, detail):
        if self.guard is not None:
            self.guard._add(name, detail)
        elif self.taint is not None:
            self.taint(name, detail)

    def new_flags(self):
        if self.guard is None:
            return []
        found = self.guard.found[self.reported:]
        self.reported = len(self.guard.found)
        return [list(f) for f in found]

    def window(self, count=True, check=True):
        return self.guard.window(count, check) if self.guard is not None else timing._null_window()

    def timed_window(self):
        return self.window(check=False)

    # ---- load -----------------------------------------------------------------------
    def op_precompile(self, req, _fds):
        if self.role != "candidate" or torch.cuda.is_initialized():
            return {"ok": False, "status": "harness_error",
                    "feedback": "precompile: the candidate's, before its CUDA context"}
        cap = req.get("capability")
        if not (isinstance(cap, list) and len(cap) == 2 and all(isinstance(x, int) for x in cap)):
            return {"ok": False, "status": "harness_error", "feedback": "precompile: capability must be [major, minor]"}
        limit = MAX_AUTOTUNE_CONFIGS if self.gpu else 1
        return {"precompile": precompile.run(self.tmpdir, self.job, cap, self.seed, lambda w: cap_autotune(w, limit),
                                             wait_s=precompile.wait_s(self.job.get("options"), self.gpu))}

    def op_load(self, req, _fds):
        task = self.job.get("task") or {}
        try:
            mod = loader.load_task(task, self.tmpdir)
        except loader.TaskError as e:
            raise Stop(task_error=str(e))
        self.get_inputs = mod.get_inputs
        out = {"sandbox": self.sandbox}
        if self.role == "reference" and req.get("describe"):
            out["task_info"] = taskinfo.describe(mod, loader.task_source(task), self.seed)
            if req.get("describe_only"):
                return out
        self.op_cuda(req, _fds)
        t1 = time.monotonic()
        with torch.device(self.dev):
            I.seed_all(self.seed)
            init_inputs = list(mod.get_init_inputs())
        if self.role == "reference":
            self.model = self.build_reference(mod, init_inputs, warm=req.get("warm") is not False)
        else:
            self.model = self.build_candidate(mod, init_inputs)
        self.held = self.held_sets(mod)
        # Where the load's time went (diagnostics only: stage_ms, never a decision).
        out["phases_ms"] = {"sandbox": self.sandbox_ms, "cuda": self.cuda_ms or 0.0,
                            "build": round((time.monotonic() - t1) * 1e3, 3)}
        if self.warm_ms is not None:
            out["phases_ms"]["warm"] = self.warm_ms
        out.update(held=len(self.held), min_bytes=_int_or_none(getattr(mod, "MIN_BYTES", None)))
        self.loaded = {"held": out["held"], "min_bytes": out["min_bytes"]}
        return out

    def op_cuda(self, _req, _fds):
        """The CUDA context, once; before the task's or the submission's code is built."""
        if self.gpu and self.cuda_ms is None:
            t0 = time.monotonic()
            torch.cuda.init()
            torch.zeros(1, device=self.dev)
            self.limit_memory()
            self.cuda_ms = round((time.monotonic() - t0) * 1e3, 3)
        return {}

    def build_reference(self, mod, init_inputs, warm=True):
        """The reference model; warm: one forward call on a full set of inputs (its
        cuBLAS/cuDNN handles and workspaces made here, not in a timed call). Not when the
        judge was admitted without the reference's memory (kgharness.admission, the
        reference later): that call would hold a set of inputs in this process's cache,
        outside every reservation (H200: 14 GiB per row_l3_norm evaluation owing its
        reference, and the GPU at 139 GiB); the judge makes it once the memory is there."""
        try:
            with torch.device(self.dev):
                I.seed_all(self.seed)
                model = mod.Model(*I.clone(init_inputs))
            model.eval()
            if warm:
                t0 = time.monotonic()
                with torch.no_grad():
                    model(*I.make_inputs(self.get_inputs, self.seed, self.dev))
                if self.gpu:
                    torch.cuda.synchronize()
                self.warm_ms = round((time.monotonic() - t0) * 1e3, 3)
        except Stop:
            raise
        except BaseException as e:  # noqa: BLE001
            raise Stop(**self.failure(e))
        return model

    def limit_memory(self):
        """The candidate is held to gpu_memory_fraction of the GPU: one that allocates
        everything fails alone. The reference is not capped: its share in the reservation
        (kgharness.admission) sizes the admission only (measured on an H200: capping the
        reference at twice its shapes' bytes ran 58 references out of memory)."""
        if self.role != "candidate":
            return
        frac = float(self.opts.get("gpu_memory_fraction") or 0.25)
        self.mem_cap = min(max(frac, 0.01), 1.0)
        torch.cuda.set_per_process_memory_fraction(self.mem_cap, 0)

    def build_candidate(self, mod, init_inputs):
        code = self.job.get("code")
        self.cand_file, do_import = loader.load_candidate(code, self.tmpdir)
        private = ("/tmp", "/dev/shm") if sandbox.private_active() else ()
        self.guard = guards.Guard(self.cand_file, self.tmpdir, taint=self.taint, writable=private)
        cap_autotune(self.guard.warnings, MAX_AUTOTUNE_CONFIGS if self.gpu else 1)
        try:
            with self.guard.window(count=False):
                module = do_import()
        except BaseException as e:  # noqa: BLE001
            raise Stop(**self.failure(e, during_import=True))
        ModelNew = vars(module).get("ModelNew")
        if ModelNew is None or not callable(ModelNew):
            raise Stop(status="invalid_submission",
                       feedback="importing the submission did not define a callable ModelNew")
        if isinstance(ModelNew, type) and issubclass(ModelNew, mod.Model) and \
                getattr(ModelNew, "forward", None) is getattr(mod.Model, "forward", None):
            self.guard._add("decoy", "ModelNew subclasses Model without overriding forward")
        try:
            with self.guard.window(count=False), torch.device(self.dev):
                I.seed_all(self.seed)
                model = ModelNew(*I.clone(init_inputs))
                if isinstance(model, torch.nn.Module):
                    model.eval()
                    if self.opts.get("copy_weights"):
                        with torch.device(self.dev):
                            I.seed_all(self.seed)
                            ref = mod.Model(*I.clone(init_inputs))
                        model.load_state_dict(ref.state_dict(), strict=False)
        except BaseException as e:  # noqa: BLE001
            raise Stop(**self.failure(e))
        return model

    def held_sets(self, mod):
        fn = getattr(mod, "get_held_out_inputs", None)
        if fn is None:
            return []
        try:
            with torch.device(self.dev):
                I.seed_all(self.seed)
                sets = list(fn())
            return [[I.to_device(x, self.dev) for x in s] for s in sets]
        except BaseException as e:  # noqa: BLE001
            if self.role == "reference":
                raise Stop(task_error=f"get_held_out_inputs raised {type(e).__name__}: {str(e)[:200]}")
            raise

    # ---- buffers and calls ------------------------------------------------------------
    def op_attach(self, req, fds):
        spec = req["spec"]
        lay, _ = exchange.layout(spec)
        self.op_detach(req, ())   # the same id again: the old mapping goes first
        u8 = exchange.attach(req["handle"], fds, self.dev)
        self.buffers[req["buf"]] = (exchange.views(u8, lay), _tensor_keys(spec), u8)
        return {}

    def op_detach(self, req, _fds):
        got = self.buffers.pop(req.get("buf"), None)
        if got is not None:
            exchange.detach(got[2])
        return {}

    def op_hello(self, req, _fds):
        """A reference host serves one judge at a time (kgharness.refhost): a new borrower
        starts with no buffer of an earlier one's mapped (a judge killed mid-window left
        its own), and learns what the task's load found."""
        self.kept = None
        for buf in list(self.buffers):
            self.op_detach({"buf": buf}, ())
        return dict(self.loaded or {}, loaded=self.loaded is not None, nonce=str(req.get("nonce"))[:64])

    def inputs_for(self, which, into=None):
        """The inputs of `which`; with `into` (a previous call's), its values in their storage
        where they pair and fit (I.refill), else fresh ones."""
        if "held" in which:
            fresh = I.clone(self.held[int(which["held"])])
        else:
            fresh = I.make_inputs(self.get_inputs, int(which["seed"]), self.dev)
        if into is None:
            return fresh
        return I.refill(into, fresh) or fresh

    def room_for(self, inputs):
        """Whether another set of these inputs fits under this process's share of the GPU (a
        same_storage call makes the new values beside the old): an honest kernel must not
        run out of memory for a check of the harness's making."""
        if not self.gpu or not torch.cuda.is_initialized():
            return True
        need = sum(t.numel() * t.element_size() for t in I.flatten(inputs) if T.type(t) is torch.Tensor)
        reserved = torch.cuda.memory_reserved()
        cached = reserved - torch.cuda.memory_allocated()
        cap = self.mem_cap * torch.cuda.get_device_properties(0).total_memory
        return reserved + max(0, need - cached) <= 0.9 * cap

    def op_call(self, req, _fds):
        """One call on the inputs of req (a seed or a held-out set): its outputs' spec, its
        inputs' checksum, its outputs copied into the judge's buffer. The checks' device work
        is queued and read after at most two synchronisations (the side-stream check needs
        one between its two checksums): on a GPU that other evaluations share, each one
        waits for this context's turn, ~2 ms for each other busy context on an H200
        (scripts/measure/timeslice_probe.py). With four, a heavy task's correctness call took
        166 ms (median, 7 x 16, README Measurements) for ~10 ms of work."""
        t0 = T.perf_counter()
        into = self.kept_inputs if req.get("same_storage") is True else None
        self.release()
        if into is not None and not self.room_for(into):
            into = None
        inputs = self.inputs_for(req["inputs"], into)
        del into
        if req.get("keep") is True:
            self.kept_inputs = inputs
        t1 = T.perf_counter()
        # Queued ahead of forward() on the current stream, so it sums the inputs as made.
        # Work forward() puts on another stream could race with it; what it changed then
        # shows as a checksum that differs from the reference's (`patch`) or from the one
        # after the call (`input_mutation`).
        before = I.input_sum_queued(inputs)
        t2 = T.perf_counter()
        leaves, side = self.run(inputs, checked=True)
        t3 = T.perf_counter()
        out = {"spec": [I.leaf_spec(x) for x in leaves]}
        after = I.input_sum_queued(inputs) if self.role == "candidate" else None
        self.kept = leaves
        out["written"] = self.write(req.get("buf"), leaves, out["spec"], sync=False)
        if self.gpu:
            T.cuda_sync()
        got, got_after, at_return, again = I.read_sums(before[0], after[0] if after else [], *(side or ([], [])))
        t4 = T.perf_counter()
        out["in_sum"] = got + before[1]
        if after is not None and got_after + after[1] != out["in_sum"]:
            self.flag("input_mutation", "forward() modified its input tensors")
        if at_return != again:
            self.flag("side_stream", "outputs changed after a full device synchronize: work "
                      "was still running on another stream when forward() returned")
        parts = {"inputs": t1 - t0, "in_sum": t2 - t1, "run": t3 - t2, "after": t4 - t3}
        out["parts_ms"] = {k: round(x * 1e3, 4) for k, x in parts.items()}
        return out

    def run(self, inputs, checked=False):
        """forward() on inputs: (its output leaves, None or the side-stream check's two
        checksums of them, queued: one when forward() returned, one after a full device
        synchronize; they must agree)."""
        streams = checked and self.gpu and self.role == "candidate"
        try:
            if streams:
                guards.S.streams = {}
            with self.window(), torch.no_grad():
                out = self.model(*inputs)
            leaves = I.flatten(out)
            side = None
            if streams:
                self.unjoined(guards.S.streams)
                # queued on the current stream without a sync: reads what the stream sees now
                at_return = I.fingerprint(leaves)
                T.cuda_sync()
                side = (at_return, I.fingerprint(leaves))
            return leaves, side
        except Stop:
            raise
        except BaseException as e:  # noqa: BLE001
            raise Stop(**self.failure(e))
        finally:
            guards.S.streams = None

    def unjoined(self, streams):
        """Own kernels still queued on another stream when forward() returned, while the
        current stream has nothing left to do, so nothing on it waits for them: the timed
        events (on the current stream) miss their work. The fingerprint check below races
        with that work when every stream shares one hardware queue
        (CUDA_DEVICE_MAX_CONNECTIONS=1): the GPU suite let side_stream_unjoined through
        once in 158 (H200, 2026-12-02). This one does not race. A joined stream leaves a
        wait on the current one, which then still has work: not flagged."""
        cur = guards.current_stream() if guards.current_stream is not None else None
        if not streams or cur is None or guards.stream_query is None:
            return
        pending = [st for k, st in streams.items() if k != cur.cuda_stream and not guards.stream_query(st)]
        if pending and guards.stream_query(cur):
            self.flag("side_stream", "its kernels were still running on a stream that forward() did not "
                      "join when it returned")

    def release(self):
        """Drop the last call's outputs before making new inputs (a call's inputs live only
        in its own request). Held while the next were made, a call's inputs and outputs
        raised a runner's peak by a set: on an H200 at 5b70198 a 14 GiB-input task's
        reference peaked at 43 GiB and its candidate at 29, and admission sizes every
        evaluation of a task by its measured peak. Inputs kept for a same_storage call
        (op_call) go too, unless that call has taken them first."""
        self.kept = None
        self.kept_inputs = None

    def write(self, buf, leaves, spec, sync=True):
        """Copy leaves into the judge's buffer buf; without sync the caller synchronises
        before it answers (the judge reads the buffer once it has the answer)."""
        if buf is None:
            return False
        views, keys, _ = self.buffers[buf]
        if _tensor_keys(spec) != keys:
            return False
        I.write_leaves(views, leaves)
        if self.gpu and sync:
            T.cuda_sync()
        return True

    def op_sum(self, req, _fds):
        """The checksum of some inputs, without running the model (determinism checks)."""
        self.release()
        return {"in_sum": I.input_sum(self.inputs_for(req["inputs"]))}

    def op_write(self, req, _fds):
        leaves = self.kept or []
        return {"written": self.write(req["buf"], leaves, [I.leaf_spec(x) for x in leaves])}

    # ---- timing -----------------------------------------------------------------------
    def op_go(self, req, _fds):
        """One timed call on fresh inputs of req's seed. The inputs are made inside this
        request, so the judge's clock covers making them and the call as one: work done
        while they are made (a replaced input maker that computes the output before the
        timer starts) is the call's overhead, which the wall check compares with the
        reference's. When they were a request of their own ("prep"), no clock compared
        that time, and such work was free."""
        # A collection pause inside a timed call would show on the judge's clock as
        # overhead; the reference's runner and the candidate's both pause it alike.
        gc.disable()
        t0 = T.perf_counter()
        self.release()
        inputs = I.make_inputs(self.get_inputs, int(req["seed"]), self.dev)
        if self.gpu:
            # The inputs' GPU work ends here rather than in timed_call's first sync, so
            # that parts_ms can tell the two apart; the call waits for it either way.
            T.cuda_sync()
            if self.flusher is None:
                self.flusher = timing.Flusher(self.dev)
        t1 = T.perf_counter()
        head = req.get("head_ms")
        head = float(head) if isinstance(head, (int, float)) and 0 < head <= 1e3 else None
        ms, out, enqueue = timing.timed_call(self.model, inputs, self.timed_window, self.flusher,
                                             self.gpu, head)
        t2 = T.perf_counter()
        leaves = I.flatten(out)
        spec = [I.leaf_spec(x) for x in leaves]
        written = self.write(req.get("buf"), leaves, spec)
        t3 = T.perf_counter()
        parts = {"inputs": (t1 - t0) * 1e3, "timed": (t2 - t1) * 1e3, "write": (t3 - t2) * 1e3}
        return {"ms": ms, "written": written, "enqueue_ms": enqueue,
                "parts_ms": {k: round(x, 4) for k, x in parts.items()}}

    def op_exact(self, req, _fds):
        """A task check's float64 pass (kgharness.exactness) on one seed's inputs, or on a
        held-out set's under a size the judge gives: the reference only."""
        if self.role != "reference":
            return {"ok": False, "status": "harness_error", "feedback": "exact: a request for the reference"}
        self.release()
        tol = {"atol": float(req["atol"]), "rtol": float(req["rtol"])}
        which = {"held": int(req["held"])} if "held" in req else {"seed": int(req["seed"])}
        max_mb = float(req["max_mb"]) if "max_mb" in req else None
        try:
            return {"exact": exactness.measure(self.model, lambda: self.inputs_for(which), tol, max_mb)}
        finally:
            if self.gpu:
                torch.cuda.empty_cache()   # the pass's float64 copies, back to the reservation

    def op_coverage(self, req, _fds):
        self.release()
        inputs = I.make_inputs(self.get_inputs, int(req["seed"]), self.dev)
        with torch.no_grad():
            return {"coverage": timing.coverage(self.model, inputs, self.window)}

    def op_finish(self, _req, _fds):
        gc.enable()
        if self.guard is None:
            return {"launches": 0, "used_compile": False, "warnings": []}
        self.guard.check()
        return {"launches": self.guard.launches, "used_compile": self.guard.used_compile(),
                "warnings": list(self.guard.warnings)}


def _tensor_keys(spec):
    return [(x["dtype"], list(x["shape"]), x.get("device")) for x in spec if x.get("kind") == "tensor"]


def _int_or_none(v):
    return int(v) if isinstance(v, int) and not isinstance(v, bool) and v > 0 else None


def serve(end, runner):
    """The runner's loop: one reply per request until the judge closes the channel."""
    while True:
        try:
            req, fds = end.recv()
        except Exception:   # the judge is gone, or sent garbage: nothing left to do
            return
        t0 = time.monotonic()
        reply = runner.handle(req, fds)
        reply["runner_ms"] = round((time.monotonic() - t0) * 1e3, 3)
        end.reply(req, **reply)


# @triton.autotune keeps at most this many configs in the candidate's process (PROTOCOL.md,
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
