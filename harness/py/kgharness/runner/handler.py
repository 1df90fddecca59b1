"""A runner: the process that runs one side of an evaluation, on the judge's orders.

There are two per evaluation, forked by the judge before it touches CUDA: the
`reference` runner imports the task and runs `Model`; the `candidate` runner imports
the task (for its inputs) and the submission, and runs `ModelNew`. Both are hostile
(a task registered over the API is untrusted too): nothing a runner says decides a
verdict in its favour. A runner computes, writes its outputs into the judge's
exchange buffers, times itself, and reports what its detectors saw; the judge
compares, cross-checks and decides (kgharness.judge).

This module dispatches the requests; kgharness.runner.models builds the models,
kgharness.runner.calls runs the calls.

One request, one reply (kgharness.channel). Requests:

  precompile {capability}   compile the candidate's Triton kernels and launchers into its
                            cache, in a child with no GPU access (kgharness.runner.precompile;
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
  ablated {inputs, buf}     like call, with every launch of the candidate's own Triton
                            kernels skipped (kgharness.judge.ablation); never fails
  go {seed, buf, head_ms?}  one timed iteration on fresh inputs of seed, made inside the
                            request (its own clock, after a head start of head_ms), outputs
                            into buf; says how long its launches took
  coverage {seed}           share of GPU time in the candidate's own kernels (detector)
  exact {seed, atol, rtol}  a task check's float64 pass: how far the reference is from its
                            exact answer (kgharness.runner.exactness); the reference only
  finish                    the detectors' last word
  hello {nonce}             a reference host's borrower starts (kgharness.zygote.refhosts): every
                            buffer an earlier borrower attached is let go; says whether
                            the task is loaded, its held-out count and MIN_BYTES
  detach {buf}              let one buffer go
"""

import gc
import time
import traceback

import torch

from .. import inputs as I
from .. import options, timing
from ..snapshot import T
from . import exactness, feedback
from .calls import Calls
from .models import Stop, Models


class Runner:
    def __init__(self, role, job, mode, device, tmpdir, taint=None):
        self.role, self.job, self.mode, self.tmpdir = role, job, mode, tmpdir
        self.gpu = mode == "gpu"
        self.dev = device if self.gpu else "cpu"
        self.opts = job.get("options") or {}
        self.seed = options.seed(self.opts)
        self.taint = taint
        self.guard = None
        self.cand_file = None
        self.buffers = {}           # id -> (views, spec)
        self.kept = None            # leaves of the last call, for `write`
        self.kept_inputs = None     # the last call's inputs, when the judge asked to keep them
        self.flusher = None
        self.reported = 0           # guard findings already sent
        self.sandbox = None         # what held of the walls (kgharness.runner.spawn), for the verdict
        self.mem_cap = 1.0          # share of the GPU this process may hold (limit_memory)
        self.sandbox_ms = 0.0       # how long its walls took to put up (kgharness.runner.spawn)
        self.cuda_ms = None         # how long its CUDA context took, once made
        self.warm_ms = None         # how long the reference's warm-up call took, if it made one
        self.loaded = None          # a reference host's answer to hello, once loaded
        # model, get_inputs and held (the task's held-out input sets) come with `load`.
        self.models, self.calls = Models(self), Calls(self)
        self.requests = {
            "precompile": self.models.precompile, "cuda": self.models.cuda, "load": self.models.load,
            "attach": self.calls.attach, "detach": self.calls.detach, "hello": self.calls.hello,
            "call": self.calls.call, "write": self.calls.write_last, "sum": self.calls.sum,
            "ablated": self.calls.ablated,
            "go": self.go, "exact": self.exact, "coverage": self.coverage, "finish": self.finish,
        }

    def handle(self, req, fds):
        op = req.get("op")
        fn = self.requests.get(op) if isinstance(op, str) else None
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

    # ---- timing and the last word -------------------------------------------------------
    def go(self, req, _fds):
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
        self.calls.release()
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
        written = self.calls.write(req.get("buf"), leaves, spec)
        t3 = T.perf_counter()
        parts = {"inputs": (t1 - t0) * 1e3, "timed": (t2 - t1) * 1e3, "write": (t3 - t2) * 1e3}
        return {"ms": ms, "written": written, "enqueue_ms": enqueue,
                "parts_ms": {k: round(x, 4) for k, x in parts.items()}}

    def exact(self, req, _fds):
        """A task check's float64 pass (kgharness.runner.exactness) on one seed's inputs, or on a
        held-out set's under a size the judge gives: the reference only."""
        if self.role != "reference":
            return {"ok": False, "status": "harness_error", "feedback": "exact: a request for the reference"}
        self.calls.release()
        tol = {"atol": float(req["atol"]), "rtol": float(req["rtol"])}
        which = {"held": int(req["held"])} if "held" in req else {"seed": int(req["seed"])}
        max_mb = float(req["max_mb"]) if "max_mb" in req else None
        try:
            return {"exact": exactness.measure(self.model, lambda: self.calls.inputs_for(which), tol, max_mb)}
        finally:
            if self.gpu:
                torch.cuda.empty_cache()   # the pass's float64 copies, back to the reservation

    def coverage(self, req, _fds):
        self.calls.release()
        inputs = I.make_inputs(self.get_inputs, int(req["seed"]), self.dev)
        with torch.no_grad():
            return {"coverage": timing.coverage(self.model, inputs, self.window)}

    def finish(self, _req, _fds):
        gc.enable()
        if self.guard is None:
            return {"launches": 0, "used_compile": False, "warnings": []}
        self.guard.check()
        return {"launches": self.guard.launches, "used_compile": self.guard.used_compile(),
                "warnings": list(self.guard.warnings)}


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
