"""The reference's screens (docs/protocol.md, Task checks): its outputs finite, not
(near-)constant, dependent on the seed, and its inputs deterministic. Run by the judge on
the reference's outputs in its buffers during the correctness trials (kgharness.judge.trials),
before the candidate's outputs are compared with them or shared with later evaluations."""


class ReferenceScreens:
    """`trials` is the kgharness.judge.trials.Trials whose reference buffer is screened."""

    def __init__(self, trials):
        self.trials = trials
        self.ref0 = None         # seed 0's reference outputs (a snapshot id), until seed 1 is screened

    def screen(self, i, in_sum):
        t = self.trials
        j, ops, ref = t.judge, t.ops, (t.ref_buf, t.spec)
        t.last_in_sum = in_sum
        t.in_sums.append(in_sum)
        if ops.nonfinite(*ref):
            j.task_fail("reference output contains NaN/Inf")
        if i == 0:
            t.tol = ops.tolerance(*ref, atol=j.opts["atol"], rtol=j.opts["rtol"], task=j.task_tol)
            j.verdict["tolerance"] = t.tol
            if ops.near_constant(*ref, t.tol):
                j.task_fail("degenerate reference: output is (near-)constant, so a constant would pass")
            self.ref0 = ops.snapshot(*ref)
        if t.keep is not None:
            t.keep.append(ops.snapshot(*ref))
        if i == 1:
            independent = not ops.differ(self.ref0, t.ref_buf, t.spec, t.tol)
            ops.drop(self.ref0)
            self.ref0 = None
            if independent and self.seed_independent():
                j.task_fail("degenerate reference: outputs do not depend on the input seed (one fixed "
                            "tensor, their mean over seeds, is within tolerance of every seed's output)")

    def seed_independent(self):
        """The exact check, for outputs two seeds could not tell apart: is the mean over all
        seeds within tolerance of every seed's output? Recomputes each seed twice (rare)."""
        t = self.trials
        seed, n, ops = t.judge.opts["seed"], t.judge.opts["seeds"], t.ops
        acc = None
        for i in range(n):
            self.recompute(seed + i)
            acc = ops.accumulate(acc, t.ref_buf, t.spec)
        try:
            for i in range(n):
                self.recompute(seed + i)
                if not ops.mean_within(acc, n, t.ref_buf, t.spec, t.tol):
                    return False
            return True
        finally:
            ops.drop(acc)

    def recompute(self, s):
        t = self.trials
        rr = t.judge.talk.ask(t.reference, "call", inputs={"seed": s}, buf=t.ref_buf)
        if rr.get("written") is not True:
            t.judge.task_fail("the reference's outputs have other shapes or types for another seed")

    def determinism(self, seed):
        t = self.trials
        if not t.in_sums:
            return
        rep = t.judge.talk.ask(t.reference, "sum", inputs={"seed": seed})
        if rep.get("in_sum") != t.in_sums[0]:
            t.judge.task_fail("get_inputs() is not deterministic under torch.manual_seed")
