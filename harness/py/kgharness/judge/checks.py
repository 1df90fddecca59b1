"""The judge's last word on a candidate that got this far: the trials' outcome as a status,
the Triton policy (require_triton), the candidate's coverage and its detectors' warnings."""

from . import screen


def conclude(judge, failure):
    """The status after the trials: correct, or incorrect with the first failure's why."""
    v = judge.verdict
    if failure is None:
        v["status"] = "correct"
    else:
        where, res = failure
        v["status"] = "incorrect"
        v["feedback"] = f"mismatch in {where}: {res['msg']}"
        v["error_signature"] = "Mismatch: " + ("lazy output" if res.get("flag") else "output mismatch")
        if v["tolerance"]["dtype"] == "float32" and 1e-4 < res.get("scaled", 0) < 5e-2 and \
                "tl.dot" in (judge.job.get("code") or ""):
            v["feedback"] += ("\nThis looks like TF32 rounding in tl.dot: pass "
                              "input_precision=\"ieee\" to tl.dot for full fp32 precision.")
    triton_policy(judge)


def triton_policy(judge):
    """No launch of the submission's own Triton kernels: `decoy` when it defines some,
    `no_triton` when it defines none (unless require_triton is false)."""
    if judge.launches > 0 or not judge.opts["require_triton"]:
        return
    if judge.used_compile:
        judge.flag("compile_passthrough", "forward() ran torch.compile output and launched none "
                   "of the submission's own @triton.jit kernels")
    elif screen.defines_triton_kernel(judge.job.get("code") or ""):
        judge.flag("decoy", "forward() launched none of the submission's own @triton.jit kernels")
    else:
        judge.flag("no_triton", "the submission launched no Triton kernel of its own; this "
                   "evaluation requires Triton (require_triton)")


def final_checks(judge):
    """Coverage on a GPU (the share of its time in the submission's own kernels) and the
    candidate's detectors' last word."""
    v = judge.verdict
    if judge.gpu and v["status"] == "correct":
        rep = judge.talk.ask(judge.candidate, "coverage", seed=judge.rng.randrange(1 << 30))
        cov = rep.get("coverage")
        v["coverage"] = float(cov) if isinstance(cov, (int, float)) and 0 <= cov <= 1 else None
        if judge.used_compile and (v["coverage"] or 0.0) < 0.5:
            judge.flag("compile_passthrough", "most GPU time is in torch.compile-generated kernels")
    if judge.candidate is not None:
        rep = judge.talk.ask(judge.candidate, "finish")
        w = rep.get("warnings")
        if isinstance(w, list):
            v["warnings"].extend(str(x)[:200] for x in w[:16] if str(x)[:200] not in v["warnings"])
    v["triton_launches"] = judge.launches


def note_sandbox(judge, walls):
    """The candidate's walls, as its runner saw them (informational: the judge's own
    checks do not depend on them)."""
    if isinstance(walls, dict) and walls.get("level") in ("full", "partial"):
        detail = str(walls.get("detail") or "")[:300]
        uid = walls.get("uid")
        if isinstance(uid, int):
            detail = "; ".join(x for x in (detail, f"uid {uid}", str(walls.get("uid_note") or "")[:200]) if x)
        judge.verdict["env"]["sandbox"], judge.verdict["env"]["sandbox_detail"] = walls["level"], detail
