"""How much memory a task check's float64 pass needs: the runner that runs it
(kgharness.runner.exactness) and the judge that reserves it (kgharness.judge.reservation,
kgharness.judge.taskcheck) size it alike. Arithmetic only: importing it loads nothing."""

# A task check's float64 pass (kgharness.runner.exactness) holds float64 copies of the reference's
# parameters and inputs, an intermediate and the output beside the reference's own inputs
# and outputs: EXACT_FACTOR times one call's bytes covers half-precision tasks
# (8-byte copies of 2-byte tensors). A check runs it only when that fits EXACT_MAX_MB
# (kgharness.judge.taskcheck), and reserves it for its reference.
EXACT_FACTOR = 8
EXACT_MAX_MB = 24576.0


def exact_need_mb(call_mb):
    """MiB a task check's float64 pass needs for a call of call_mb MiB."""
    return EXACT_FACTOR * call_mb


def exact_pass_mb(call_mb, limit_mb=None):
    """exact_need_mb, or None where that is over limit_mb (EXACT_MAX_MB unless given) and
    the check does not run the pass."""
    mb = exact_need_mb(call_mb)
    return mb if mb <= (EXACT_MAX_MB if limit_mb is None else limit_mb) else None
