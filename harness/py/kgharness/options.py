"""A job's options (docs/protocol.md, Job options): their defaults, in one table, and how
each process of an evaluation reads them.

Go is the source of truth: it fills every option before it sends a job
(eval.DefaultOptions), except those it sends only when they differ from their default
(`omitempty` in eval/options.go). SENT repeats what Go sends by default, as the golden
record harness/testdata/protocol/eval.json holds it; OMITTED is what an absent
omitempty option means. tests/test_options.py holds both to Go's files. Every option is
optional on the wire, so a job from anything but Go (a test, a probe script) may leave
out more: those options take the same defaults.
"""

SENT = {
    "seeds": 5, "seed": 0, "atol": None, "rtol": None, "timing": True, "timing_budget_ms": 50,
    "min_iters": 5, "max_iters": 500, "timeout_s": 120, "memory_limit_mb": 32768,
    "output_limit_bytes": 1 << 20, "copy_weights": False, "max_code_bytes": 262144,
    "gpu_memory_fraction": 0.25,
}
# compile_timeout_s 0: the mode's compile budget (kgharness.runner.precompile.budget_s).
OMITTED = {"compile_timeout_s": 0, "require_triton": True, "cpu_timing": False}
DEFAULTS = {**SENT, **OMITTED}

# What the judge reads (parse): the options that decide trials, timing and the verdict.
JUDGE_KEYS = ("seeds", "seed", "atol", "rtol", "timing", "timing_budget_ms", "min_iters", "max_iters",
              "copy_weights", "max_code_bytes", "gpu_memory_fraction", "require_triton", "cpu_timing")


def parse(raw):
    """The judge's options: each of JUDGE_KEYS as the job gives it (None: its default), the
    counts as ints (seeds within 1..100), the budget as a float."""
    opts = {k: DEFAULTS[k] for k in JUDGE_KEYS}
    for k, v in (raw or {}).items():
        if k in opts and v is not None:
            opts[k] = v
    for k in ("seeds", "seed", "min_iters", "max_iters", "max_code_bytes"):
        opts[k] = int(opts[k])
    opts["seeds"] = max(1, min(opts["seeds"], 100))
    opts["timing_budget_ms"] = float(opts["timing_budget_ms"])
    return opts


def positive(v, default):
    """An option that must be a positive number (timeout_s, memory_limit_mb, ...): as a
    float, else default (a bool is not a number here)."""
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0 else default


def timeout_s(raw):
    """The evaluation's wall-clock limit in seconds (timeout_s)."""
    return positive((raw or {}).get("timeout_s"), float(DEFAULTS["timeout_s"]))


def memory_limit_bytes(raw):
    """Each runner's host memory limit (memory_limit_mb), in bytes."""
    return positive((raw or {}).get("memory_limit_mb"), float(DEFAULTS["memory_limit_mb"])) * (1 << 20)


def output_limit_bytes(raw):
    """Each runner's stdout+stderr limit (output_limit_bytes; 0 or absent: the default)."""
    return positive((raw or {}).get("output_limit_bytes"), DEFAULTS["output_limit_bytes"])


def seed(raw):
    """The base seed, as a runner reads it (absent, null or 0: 0)."""
    return int((raw or {}).get("seed") or DEFAULTS["seed"])


def gpu_memory_fraction(raw):
    """The candidate runner's share of the GPU, as a runner reads it (absent, null or 0:
    the default)."""
    return float((raw or {}).get("gpu_memory_fraction") or DEFAULTS["gpu_memory_fraction"])
