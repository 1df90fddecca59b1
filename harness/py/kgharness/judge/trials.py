"""Correctness trials, run by the judge: the reference and the candidate on the same
seeds, their outputs in the judge's buffers, compared there; the reference screened.

Per seed, both runners compute at once. The first call of each says what its outputs
are (a spec); the judge lays out one buffer per runner from the reference's spec and
lends it. A candidate whose spec differs (another shape, dtype or device, a tensor
subclass, a number where a tensor is due) fails that trial without writing anything.
After a candidate writes, the judge checksums its buffer, compares, and checksums
again: outputs that change after "done" are the `forge` flag's business.

One trial (of seeds >= 2, chosen at random past the first) writes its seed's input
values into the storage the candidate's previous call got (the same tensors, at the same
data_ptr) instead of fresh tensors: an output cached by address or by shape is stale
there every time, not only when the allocator happens to reuse an address. When that
trial fails with the very bytes the previous trial passed with, the candidate returned
its last answer for new values: the `cache` flag.

Where the judge service shares reference work (kgharness.judge.refstore), an evaluation of a
task whose work is already there compares its candidate with the shared outputs and
its reference runner computes nothing here (it is timed in the window); one whose work
is not there does it as above, keeps a copy of each seed's and held-out set's outputs,
and publishes them once every screen has passed.
"""

import contextlib
import time

from .. import channel, exchange
from .refscreens import ReferenceScreens
from .specs import invalid_spec, spec_mismatch

# A candidate call's parts, as its runner reports them (kgharness.runner.calls.Calls.call's parts_ms).
CALL_PARTS = ("inputs", "in_sum", "run", "after")


class Trials:
    def __init__(self, judge):
        self.judge = judge
        self.reference, self.candidate = judge.reference, judge.candidate
        self.spec = None
        self.ref_buf = self.cand_buf = None
        self.in_sums = []
        self.ops = judge.ops     # kgharness.judge.bufferops: the buffers and every computation over them
        self.tol = None
        self.shared = judge.sharing.entry   # a refstore entry this evaluation uses, or None
        # Snapshots of the reference's outputs per seed, to publish (None: not publishing).
        self.keep = [] if judge.sharing.publisher and self.shared is None and self.candidate is not None else None
        n = judge.opts["seeds"]
        # The trial whose inputs are the previous call's tensors with new values, or None.
        self.same_at = judge.rng.randrange(1, n) if n > 1 and self.candidate is not None else None
        self.last = None         # (passed, fingerprint of the candidate's outputs) of the last trial
        self.out_fps = None      # the candidate's outputs' fingerprint at its last comparison
        self.screens = ReferenceScreens(self)

    def call_parts(self, rep):
        """Where the runner says a correctness call on a seed's inputs after its first went
        (CALL_PARTS): summed into stage_ms trial_call_* (trial_call_n: how many). The
        runner's own word, so a diagnostic that decides nothing."""
        parts = rep.get("parts_ms") if isinstance(rep, dict) else None
        if not isinstance(parts, dict):
            return
        sm = self.judge.verdict["stage_ms"]
        sm["trial_call_n"] = sm.get("trial_call_n", 0) + 1
        for k in CALL_PARTS:
            x = parts.get(k)
            if isinstance(x, (int, float)) and not isinstance(x, bool) and 0 <= x < 1e7:
                sm[f"trial_call_{k}"] = round(sm.get(f"trial_call_{k}", 0.0) + float(x), 3)

    @contextlib.contextmanager
    def spend(self, key):
        """Where correctness time goes (stage_ms trial_calls, trial_checks: the judge's clock,
        time stopped for other evaluations' windows included)."""
        t0 = time.perf_counter()
        try:
            yield
        finally:
            sm = self.judge.verdict["stage_ms"]
            sm[key] = round(sm.get(key, 0.0) + (time.perf_counter() - t0) * 1e3, 3)

    # ---- the run ----------------------------------------------------------------------
    def run(self):
        j, seed, n = self.judge, self.judge.opts["seed"], self.judge.opts["seeds"]
        failure, complete = None, True
        if self.candidate is not None:
            j.verdict["trials_total"] = n
        for i in range(n):
            if self.candidate is not None and i and i != self.same_at:
                self.extra_calls(i)
            res = self.trial(i, seed + i)
            if res is not None and not res["ok"] and failure is None:
                where = f"trial {i} (seed {seed + i}"
                if i == self.same_at:
                    where += ", its values written into the previous call's input tensors"
                failure = (where + ")", res)
                if res.get("flag"):
                    complete = False
                    break   # a lazy/proxy output: no point in more trials
        if self.shared is None:
            self.screens.determinism(seed)
        if self.candidate is None:
            self.held_refs()      # a task check: the reference's held-out outputs, screened
            return None
        if failure is None or (self.keep is not None and complete):
            held = self.held_refs()
            if complete:
                self.publish(held)
            if failure is None:
                failure = self.held_out(held)
        return failure

    def extra_calls(self, i):
        """0-2 calls the candidate cannot tell from trials: call counts are not predictable."""
        for _ in range(self.judge.rng.randint(0, 2)):
            with self.spend("trial_calls"):
                rep = self.judge.talk.ask(self.candidate, "call", inputs={"seed": self.judge.rng.randrange(1 << 30)})
            self.call_parts(rep)
            self.valid_spec(self.candidate, rep.get("spec"))

    def storage(self, i):
        """The candidate's call fields of trial i for the same-storage trial."""
        if self.same_at is None:
            return {}
        return {"keep": True} if i + 1 == self.same_at else {"same_storage": True} if i == self.same_at else {}

    def trial(self, i, s):
        if self.shared is not None:
            return self.shared_trial(i, s)
        j = self.judge
        first = self.ref_buf is None
        rf = {"inputs": {"seed": s}, "buf": None if first else self.ref_buf}
        if self.candidate is None:
            rr, rc = j.talk.ask(self.reference, "call", **rf), None
        else:
            cf = {"inputs": {"seed": s}, "buf": None if first else self.cand_buf, **self.storage(i)}
            with self.spend("trial_calls"):
                rr, rc = j.talk.ask_both("call", rf, cf)
            if i:
                self.call_parts(rc)
            if i == 0:
                j.verdict["stage_ms"]["first_call"] = channel.reported_ms(rc.get("runner_ms"))
                j.ctx.compiled()
        spec = self.valid_spec(self.reference, rr.get("spec"))
        written = rr.get("written")
        if first:
            self.setup(spec)
            written = j.talk.ask(self.reference, "write", buf=self.ref_buf).get("written")
        if spec != self.spec or written is not True:
            j.task_fail("the reference's outputs have other shapes or types for another seed")
        self.screens.screen(i, rr.get("in_sum"))
        if rc is None:
            return None
        return self.same_answer(i, self.candidate_result(rc, (self.ref_buf, self.spec), self.cand_buf, first))

    def same_answer(self, i, res):
        """The `cache` flag: the same-storage trial failed with the bytes the trial before it
        passed with. An honest kernel's outputs differ for new values, and a constant one
        could not have passed (the reference screens reject near-constant outputs)."""
        fp, self.out_fps = self.out_fps, None
        if i == self.same_at and not res["ok"] and self.last is not None and self.last[0] and \
                fp is not None and fp == self.last[1]:
            self.judge.flag("cache", "returned its previous call's outputs for new values in the same "
                        "input tensors (an output cached by address or shape)")
        self.last = (res["ok"], fp)
        return res

    def shared_trial(self, i, s):
        """Seed i against the shared reference outputs: only the candidate computes."""
        j, sh = self.judge, self.shared
        first = self.cand_buf is None
        cf = {"inputs": {"seed": s}, "buf": None if first else self.cand_buf, **self.storage(i)}
        if first and not j.memory.owed and not j.sharing.hosted:
            # The reference runs once too, beside the candidate's first call: its first
            # call's one-time work (allocator, library handles, cuDNN's choices) then
            # happens here, not in the window where every other evaluation waits. Admitted
            # without its memory, it makes that call once the candidate has passed
            # (sharing.SharedReference.bring_reference).
            with self.spend("trial_calls"):
                rr, rc = j.talk.ask_both("call", {"inputs": {"seed": s}, "buf": None}, cf)
            self.same_as_shared(rr)
        else:
            with self.spend("trial_calls"):
                rc = j.talk.ask(self.candidate, "call", **cf)
            if i:
                self.call_parts(rc)
        if i == 0:
            j.verdict["stage_ms"]["first_call"] = channel.reported_ms(rc.get("runner_ms"))
            j.ctx.compiled()
        if first:
            self.setup(sh["spec"])     # the reference's buffer too: it is timed in the window
            self.tol = sh["tol"]
            j.verdict["tolerance"] = self.tol
        self.last_in_sum = sh["in_sums"][i]
        return self.same_answer(i, self.candidate_result(rc, (sh["seed_ids"][i], self.spec), self.cand_buf, first))

    def publish(self, held):
        """Offer this evaluation's reference work to later evaluations of the task."""
        if self.keep is None or len(self.keep) != self.judge.opts["seeds"]:
            return
        held_ids = [self.ops.snapshot(bid, spec) for bid, spec, _ in held]
        desc = {"spec": self.spec, "tol": self.tol, "in_sums": self.in_sums, "held_count": self.judge.held,
                "held": [{"spec": spec, "in_sum": in_sum} for _, spec, in_sum in held]}
        got = self.ops.share(self.judge.sharing.key, desc, self.keep, held_ids)
        if not isinstance(got, dict) or got.get("taken") is not True:
            for bid in self.keep + held_ids:
                self.ops.drop(bid)
        elif isinstance(got.get("bytes"), int) and isinstance(got.get("version"), int):
            self.judge.ctx.stored(got["bytes"] / (1 << 20), got["version"])
        self.keep = None

    def setup(self, spec):
        self.spec = spec
        # A hosted evaluation's reference buffer is lent to the host in the window.
        self.ref_buf = None if self.judge.sharing.hosted else self.lend(self.reference, spec)
        if self.candidate is not None:
            self.cand_buf = self.lend(self.candidate, spec)

    def lend(self, r, spec):
        """A new buffer for spec's outputs, attached by runner r: its id."""
        _, size = exchange.layout(spec)
        bid, handle, fds = self.ops.alloc(size)
        try:
            self.judge.talk.ask(r, "attach", fds=fds, buf=bid, handle=handle, spec=spec)
        finally:
            channel.close_all(fds)   # the runner has its own copy now
        return bid

    # ---- the candidate's side -----------------------------------------------------------
    def candidate_result(self, rc, ref, buf, may_write):
        """Compare one candidate call (in buffer `buf`) with the reference outputs `ref`
        (buffer id, spec): a compare() dict."""
        j = self.judge
        cspec = self.valid_spec(self.candidate, rc.get("spec"))
        bad = spec_mismatch(cspec, self.spec if buf == self.cand_buf else self.held_spec)
        if bad is not None:
            if bad.get("flag"):
                j.flag(bad["flag"], bad["msg"])
            return bad
        if rc.get("in_sum") is not None and rc.get("in_sum") != self.last_in_sum:
            j.flag("patch", "the task's inputs came out different in the candidate's process")
        if rc.get("written") is not True:
            if not may_write:
                j.forge("outputs that match the expected layout were not written to the judge's buffer")
            if j.talk.ask(self.candidate, "write", buf=buf).get("written") is not True:
                j.forge("outputs that match the expected layout were not written to the judge's buffer")
        with self.spend("trial_checks"):
            got = self.ops.checks([buf], compare=(buf, cspec, ref[0], ref[1], self.tol), after=[buf])
            res, changed = got["compare"], got["after"] != got["fps"]
        if changed:
            j.flag("forge", "the candidate's outputs changed after it reported them")
        self.out_fps = got["after"]
        v = j.verdict
        v["max_abs_error"] = max(v["max_abs_error"] or 0.0, res["max_abs"])
        v["max_rel_error"] = max(v["max_rel_error"] or 0.0, res["max_rel"])
        if res["ok"] and buf == self.cand_buf:
            v["trials_passed"] += 1
        return res

    def same_as_shared(self, rr):
        """A shared evaluation's reference, at its first call, makes outputs of the shapes
        and types its entry holds."""
        if self.valid_spec(self.reference, rr.get("spec")) != self.shared["spec"]:
            self.judge.task_fail("the reference's outputs have other shapes or types than in an earlier "
                             "evaluation of this task")

    def held_refs(self):
        """The reference's outputs for each held-out set: [(buffer or snapshot id, spec, input
        checksum)], from the shared entry or computed and screened here."""
        j, sh = self.judge, self.shared
        if sh is not None:
            return [(bid, h["spec"], h["in_sum"]) for bid, h in zip(sh["held_ids"], sh["held"])]
        out = []
        for k in range(j.held):
            rr = j.talk.ask(self.reference, "call", inputs={"held": k})
            spec = self.valid_spec(self.reference, rr.get("spec"))
            rbuf = self.lend(self.reference, spec)
            if j.talk.ask(self.reference, "write", buf=rbuf).get("written") is not True:
                j.task_fail(f"the reference's outputs for held-out set {k} could not be written")
            if self.ops.nonfinite(rbuf, spec):
                j.task_fail(f"reference output for held-out set {k} contains NaN/Inf")
            out.append((rbuf, spec, rr.get("in_sum")))
        return out

    def held_out(self, held):
        """Inputs of other shapes, where the task has them: kernels baked to one shape fail."""
        j = self.judge
        for k, (rbuf, spec, in_sum) in enumerate(held):
            self.held_spec = spec
            ref = (rbuf, spec)
            cbuf = self.lend(self.candidate, spec)
            self.last_in_sum = in_sum
            try:
                # Other shapes: the candidate's kernels compile again here, so this call is
                # counted apart from the others' parts (trial_held).
                with self.spend("trial_calls"), self.spend("trial_held"):
                    rc = j.talk.ask(self.candidate, "call", inputs={"held": k})
            except Exception:
                if j.verdict["status"] in ("runtime_error", "compile_error", "resource_limit"):
                    j.flag("hardcode", f"failed on held-out input set {k} (other shapes)")
                    j.verdict["status"] = "incorrect"
                    j.verdict["feedback"] = f"held-out input set {k} (other shapes) failed: " + j.verdict["feedback"]
                raise
            res = self.candidate_result(rc, ref, cbuf, may_write=True)
            if not res["ok"]:
                j.flag("hardcode", f"wrong on held-out input set {k} (other shapes)")
                return (f"held-out set {k} (other shapes)", res)
        return None

    # ---- specs and leaves -------------------------------------------------------------------
    def valid_spec(self, r, spec):
        """A runner's output spec, checked; a bad one is the runner's protocol violation."""
        why = invalid_spec(spec)
        if why:
            if r.role == "reference":
                self.judge.task_fail(f"the reference's outputs cannot be used: {why}")
            self.judge.forge(f"an invalid output description ({why})")
        return spec
