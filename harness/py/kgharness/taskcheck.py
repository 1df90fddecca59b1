"""A task check (PROTOCOL.md, Task checks), as the judge runs it: only the reference runner,
a meta-device pass first, then at depth "full" the reference stage and, on a GPU, its time.
`self` is the kgharness.judge.Judge that owns the verdict."""

from . import channel, taskinfo, trials, window

CHECK_DEFAULTS = {"depth": "full", "auto_gflop": 2.0, "auto_mb": 256.0, "max_mb": 4096.0}


def check_options(raw):
    opts = dict(CHECK_DEFAULTS)
    opts.update({k: v for k, v in (raw or {}).items() if k in opts and v is not None})
    for k in ("auto_gflop", "auto_mb", "max_mb"):
        opts[k] = float(opts[k])
    return opts


def footprint(info):
    try:
        return taskinfo.footprint_mb(info)
    except (TypeError, KeyError):
        return None


def check_task(self, task):
    """Is the task valid (PROTOCOL.md, Task checks)? A meta-device pass first, then, at
    depth "full", the reference stage itself and, on a GPU, the reference's time."""
    label = task.get("path") or task.get("name") or "<task>"
    check = check_options(self.job.get("check"))
    self.R = self.ctx.spawn("reference", self.job)
    self.ctx.seal()
    self.stage("shapes")
    rep = self.ask(self.R, "load", describe=True, describe_only=True)
    info = rep.get("task_info") if isinstance(rep.get("task_info"), dict) else {}
    info = {k: info.get(k) for k in ("name", "tags", "outputs", "input_bytes", "param_bytes",
                                     "output_bytes", "flops", "meta_error")}
    info["meta_error"] = str(info.get("meta_error") or "")
    self.v["task_info"] = info
    mb = footprint(info)
    if mb is not None and mb > check["max_mb"]:
        self.task_fail(f"{label}: one forward call needs {mb:.0f} MiB of inputs, parameters and "
                       f"outputs; a task may use at most {check['max_mb']:.0f} MiB")
    info["depth"] = depth = choose_depth(self, info, check)
    if depth == "shapes":
        if info["meta_error"]:
            self.task_fail(f"{label}: too large to run here and cannot run on the meta device "
                           f"({info['meta_error']})")
        self.v["status"] = "correct"
        self.v["feedback"] = ("task check passed at shape level only: the task loads and one forward "
                              "call runs on the meta device; determinism and degeneracy were not "
                              "checked (too large for this device)")
        return
    self.admit(check=True, info=info)
    self.init_device()
    self.stage("reference")
    # A second import, on purpose: module-level state the meta pass touched (a lazily
    # built cache, a call counter) must not leak into the real run.
    rep = self.ask(self.R, "load")
    self.held, self.min_bytes = channel.held_count(rep.get("held")), rep.get("min_bytes")
    t = trials.Trials(self)
    t.run()
    if self.gpu and self.opts["timing"]:
        self.stage("timing")
        window.Window(self, t).reference_only()
    self.v["status"] = "correct"
    held = f" and {self.held} held-out input set(s)" if self.held else ""
    self.v["feedback"] = (f"task check passed: the reference loads, runs on {self.opts['seeds']} "
                          f"seeds{held}, and its outputs are deterministic, finite and not constant")

def choose_depth(self, info, check):
    """"full" or "shapes": "auto" runs for real what this device can afford."""
    depth = check["depth"]
    if depth in ("full", "shapes"):
        return depth
    if depth != "auto":
        self.fail("harness_error", f"unknown check_depth {depth!r}: want full, shapes or auto")
    if self.gpu:
        return "full"
    mb = footprint(info)
    if mb is None:  # no meta pass: judge by the inputs alone
        mb = (info["input_bytes"] or float("inf")) / (1 << 20)
    flops = info["flops"] or 0
    return "full" if mb <= check["auto_mb"] and flops <= check["auto_gflop"] * 1e9 else "shapes"


