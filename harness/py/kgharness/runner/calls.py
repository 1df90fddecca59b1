"""A runner's calls: the judge's exchange buffers mapped and let go, one call on a seed's
inputs or a held-out set's with its checks (input checksums, the side-stream check), its
outputs written into the judge's buffer. The requests attach, detach, hello, call, write
and sum (kgharness.runner.handler)."""

import torch

from .. import exchange, guards
from .. import inputs as I
from ..snapshot import T
from .ablation import Ablation
from .models import Stop


class Calls:
    """`runner` is the kgharness.runner.handler.Runner whose state the calls use."""

    def __init__(self, runner):
        self.runner = runner

    def attach(self, req, fds):
        r = self.runner
        spec = req["spec"]
        lay, _ = exchange.layout(spec)
        self.detach(req, ())   # the same id again: the old mapping goes first
        u8 = exchange.attach(req["handle"], fds, r.dev)
        r.buffers[req["buf"]] = (exchange.views(u8, lay), _tensor_keys(spec), u8)
        return {}

    def detach(self, req, _fds):
        r = self.runner
        got = r.buffers.pop(req.get("buf"), None)
        if got is not None:
            exchange.detach(got[2])
        return {}

    def hello(self, req, _fds):
        """A reference host serves one judge at a time (kgharness.zygote.refhosts): a new borrower
        starts with no buffer of an earlier one's mapped (a judge killed mid-window left
        its own), and learns what the task's load found."""
        r = self.runner
        r.kept = None
        for buf in list(r.buffers):
            self.detach({"buf": buf}, ())
        return dict(r.loaded or {}, loaded=r.loaded is not None, nonce=str(req.get("nonce"))[:64])

    def inputs_for(self, which, into=None):
        """The inputs of `which`; with `into` (a previous call's), its values in their storage
        where they pair and fit (I.refill), else fresh ones."""
        r = self.runner
        if "held" in which:
            fresh = I.clone(r.held[int(which["held"])])
        else:
            fresh = I.make_inputs(r.get_inputs, int(which["seed"]), r.dev)
        if into is None:
            return fresh
        return I.refill(into, fresh) or fresh

    def room_for(self, inputs):
        """Whether another set of these inputs fits under this process's share of the GPU (a
        same_storage call makes the new values beside the old): an honest kernel must not
        run out of memory for a check of the harness's making."""
        r = self.runner
        if not r.gpu or not torch.cuda.is_initialized():
            return True
        need = sum(t.numel() * t.element_size() for t in I.flatten(inputs) if T.type(t) is torch.Tensor)
        reserved = torch.cuda.memory_reserved()
        cached = reserved - torch.cuda.memory_allocated()
        cap = r.mem_cap * torch.cuda.get_device_properties(0).total_memory
        return reserved + max(0, need - cached) <= 0.9 * cap

    def call(self, req, _fds):
        """One call on the inputs of req (a seed or a held-out set): its outputs' spec, its
        inputs' checksum, its outputs copied into the judge's buffer. The checks' device work
        is queued and read after at most two synchronisations (the side-stream check needs
        one between its two checksums): on a GPU that other evaluations share, each one
        waits for this context's turn, ~2 ms for each other busy context on an H200
        (scripts/measure/timeslice_probe.py). With four, a heavy task's correctness call took
        166 ms (median, 7 x 16, README Measurements) for ~10 ms of work."""
        r = self.runner
        t0 = T.perf_counter()
        into = r.kept_inputs if req.get("same_storage") is True else None
        self.release()
        if into is not None and not self.room_for(into):
            into = None
        inputs = self.inputs_for(req["inputs"], into)
        del into
        if req.get("keep") is True:
            r.kept_inputs = inputs
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
        after = I.input_sum_queued(inputs) if r.role == "candidate" else None
        r.kept = leaves
        out["written"] = self.write(req.get("buf"), leaves, out["spec"], sync=False)
        if r.gpu:
            T.cuda_sync()
        got, got_after, at_return, again = I.read_sums(before[0], after[0] if after else [], *(side or ([], [])))
        t4 = T.perf_counter()
        out["in_sum"] = got + before[1]
        if after is not None and got_after + after[1] != out["in_sum"]:
            r.flag("input_mutation", "forward() modified its input tensors")
        if at_return != again:
            r.flag("side_stream", "outputs changed after a full device synchronize: work "
                      "was still running on another stream when forward() returned")
        parts = {"inputs": t1 - t0, "in_sum": t2 - t1, "run": t3 - t2, "after": t4 - t3}
        out["parts_ms"] = {k: round(x * 1e3, 4) for k, x in parts.items()}
        return out

    def ablated(self, req, _fds):
        """forward() on a seed's fresh inputs with every launch of the submission's own
        Triton kernels skipped (kgharness.runner.ablation), its outputs written into the
        judge's buffer: the judge compares them with the reference's
        (kgharness.judge.ablation). Never a failure of the evaluation: without its kernels
        an honest submission may well raise. The last call that computes: what it filled
        stays filled."""
        r = self.runner
        self.release()
        inputs = self.inputs_for(req["inputs"])
        ab = guards.S.ablation = Ablation(I.flatten(inputs))
        out = {"ran": False}
        try:
            leaves, _ = self.run(inputs)
            if r.gpu:
                T.cuda_sync()
            spec = [I.leaf_spec(x) for x in leaves]
            out = {"ran": True, "spec": spec, "written": self.write(req.get("buf"), leaves, spec)}
        except Exception:  # noqa: BLE001 - Stop included: what broke is no verdict here
            pass
        finally:
            guards.S.ablation = None
        out["skipped"] = ab.skipped
        return out

    def run(self, inputs, checked=False):
        """forward() on inputs: (its output leaves, None or the side-stream check's two
        checksums of them, queued: one when forward() returned, one after a full device
        synchronize; they must agree)."""
        r = self.runner
        streams = checked and r.gpu and r.role == "candidate"
        try:
            if streams:
                guards.S.streams = {}
            with r.window(), torch.no_grad():
                out = r.model(*inputs)
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
            raise Stop(**r.failure(e))
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
        r = self.runner
        cur = guards.current_stream() if guards.current_stream is not None else None
        if not streams or cur is None or guards.stream_query is None:
            return
        pending = [st for k, st in streams.items() if k != cur.cuda_stream and not guards.stream_query(st)]
        if pending and guards.stream_query(cur):
            r.flag("side_stream", "its kernels were still running on a stream that forward() did not "
                      "join when it returned")

    def release(self):
        """Drop the last call's outputs before making new inputs (a call's inputs live only
        in its own request). Held while the next were made, a call's inputs and outputs
        raised a runner's peak by a set: on an H200 at 5b70198 a 14 GiB-input task's
        reference peaked at 43 GiB and its candidate at 29, and admission sizes every
        evaluation of a task by its measured peak. Inputs kept for a same_storage call
        (call) go too, unless that call has taken them first."""
        r = self.runner
        r.kept = None
        r.kept_inputs = None

    def write(self, buf, leaves, spec, sync=True):
        """Copy leaves into the judge's buffer buf; without sync the caller synchronises
        before it answers (the judge reads the buffer once it has the answer)."""
        r = self.runner
        if buf is None:
            return False
        views, keys, _ = r.buffers[buf]
        if _tensor_keys(spec) != keys:
            return False
        I.write_leaves(views, leaves)
        if r.gpu and sync:
            T.cuda_sync()
        return True

    def sum(self, req, _fds):
        """The checksum of some inputs, without running the model (determinism checks)."""
        self.release()
        return {"in_sum": I.input_sum(self.inputs_for(req["inputs"]))}

    def write_last(self, req, _fds):
        r = self.runner
        leaves = r.kept or []
        return {"written": self.write(req["buf"], leaves, [I.leaf_spec(x) for x in leaves])}


def _tensor_keys(spec):
    return [(x["dtype"], list(x["shape"]), x.get("device")) for x in spec if x.get("kind") == "tensor"]
