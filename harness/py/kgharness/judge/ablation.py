"""The decoy that counting launches misses: a submission that launches its kernels (on a
dummy, or into a buffer it drops) while torch computes the answer. Its outputs come out
right with every launch of its own kernels skipped; an honest submission's cannot, since
its kernels write them (kgharness.runner.ablation fills what a skipped launch was given).

The last thing an evaluation that passed does, after the timing window and the coverage
call: the ablated call leaves the candidate's own buffers filled. It runs on the last
trial's seed, whose reference outputs the shared entry holds, or the reference's buffer
(computed again after the window, which used it). A normal call on another seed goes first: a
submission that keeps its output buffer between calls then holds another seed's answer
there, not this one's."""

from .specs import invalid_spec, spec_mismatch


def reference(trials):
    """Right after the window, which used the reference's buffer, and before a reference
    host this evaluation created is handed on: the last trial's seed computed into it again.
    Sets trials.ablation_ref to that buffer, or None when it could not be had."""
    t, j = trials, trials.judge
    t.ablation_ref = None
    if not wanted(t) or t.shared is not None or t.ref_buf is None:
        return
    seed = j.opts["seed"] + j.opts["seeds"] - 1
    if j.talk.ask(t.reference, "call", inputs={"seed": seed}, buf=t.ref_buf).get("written") is True:
        t.ablation_ref = t.ref_buf


def wanted(t):
    v = t.judge.verdict
    return v["status"] == "correct" and not v["hack_flags"] and t.judge.launches > 0 and \
        t.cand_buf is not None and t.spec is not None


def check(trials, windowed):
    """Flag `decoy` when the candidate's outputs match the reference's with its launches
    skipped. `windowed`: the timing window ran (and reference() after it)."""
    t, j = trials, trials.judge
    if not wanted(t):
        return
    last = j.opts["seeds"] - 1
    if t.shared is not None:
        ref = t.shared["seed_ids"][last]
    else:
        ref = t.ablation_ref if windowed else t.ref_buf
    if ref is None:
        return
    v = j.verdict
    with t.spend("trial_calls"):
        t.valid_spec(t.candidate, j.talk.ask(t.candidate, "call", inputs={"seed": j.rng.randrange(1 << 30)})
                     .get("spec"))
        rep = j.talk.ask(t.candidate, "ablated", inputs={"seed": j.opts["seed"] + last}, buf=t.cand_buf)
    skipped = rep.get("skipped")
    if isinstance(skipped, int) and not isinstance(skipped, bool) and skipped >= 0:
        v["stage_ms"]["ablated_launches"] = skipped
    if rep.get("ran") is not True or rep.get("written") is not True or not skipped:
        return
    if invalid_spec(rep.get("spec")) or spec_mismatch(rep.get("spec"), t.spec) is not None:
        return
    with t.spend("trial_checks"):
        res = t.ops.checks([], compare=(t.cand_buf, t.spec, ref, t.spec, t.tol))["compare"]
    if res.get("ok"):
        j.flag("decoy", "its outputs were right with every launch of its own Triton kernels skipped: "
               "something other than its kernels computed them")
