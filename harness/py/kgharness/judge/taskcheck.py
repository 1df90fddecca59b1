"""A task check (docs/protocol.md, Task checks), as the judge runs it: only the reference runner,
a meta-device pass first, then at depth "full" the reference stage and, on a GPU, its time.
`judge` is the kgharness.judge.flow.Judge that owns the verdict."""

import math
import time

from .. import channel, options
from ..runner import exactsize, loader, spawn, taskinfo
from . import trials, window

CHECK_DEFAULTS = {"depth": "full", "auto_gflop": 2.0, "auto_mb": 256.0, "max_mb": 4096.0}
# The float64 pass (kgharness.runner.exactness) over this many of the check's seeds.
EXACT_SEEDS = 2
# Past this share of the tolerance between the reference and its exact answer the check
# warns: an honest kernel as far from the exact answer on the other side is rejected. It
# suggests the tolerance that puts the worst element at EXACT_AIM.
EXACT_WARN = 0.5
EXACT_AIM = 0.4
# Left of the check's timeout_s (or a tenth of it, if more) for its verdict when the pass
# runs out of time.
EXACT_MARGIN_S = 5.0


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


def check_task(judge, task):
    """Is the task valid (docs/protocol.md, Task checks)? A meta-device pass first, then, at
    depth "full", the reference stage itself and, on a GPU, the reference's time."""
    label = task.get("path") or task.get("name") or "<task>"
    check = check_options(judge.job.get("check"))
    judge.reference = judge.ctx.spawn("reference", judge.job)
    judge.ctx.seal()
    judge.stage("shapes")
    rep = judge.talk.ask(judge.reference, "load", describe=True, describe_only=True)
    info = rep.get("task_info") if isinstance(rep.get("task_info"), dict) else {}
    info = {k: info.get(k) for k in ("name", "tags", "outputs", "input_bytes", "param_bytes",
                                     "output_bytes", "flops", "meta_error")}
    info["meta_error"] = str(info.get("meta_error") or "")
    judge.verdict["task_info"] = info
    mb = footprint(info)
    if mb is not None and mb > check["max_mb"]:
        judge.task_fail(f"{label}: one forward call needs {mb:.0f} MiB of inputs, parameters and "
                       f"outputs; a task may use at most {check['max_mb']:.0f} MiB")
    info["depth"] = depth = choose_depth(judge, info, check)
    if depth == "shapes":
        if info["meta_error"]:
            judge.task_fail(f"{label}: too large to run here and cannot run on the meta device "
                           f"({info['meta_error']})")
        judge.verdict["status"] = "correct"
        judge.verdict["feedback"] = ("task check passed at shape level only: the task loads and one forward "
                              "call runs on the meta device; determinism and degeneracy were not "
                              "checked (too large for this device)")
        return
    judge.memory.admit(check=True, info=info)
    judge.init_device()
    judge.stage("reference")
    # A second import, on purpose: module-level state the meta pass touched (a lazily
    # built cache, a call counter) must not leak into the real run.
    rep = judge.talk.ask(judge.reference, "load")
    judge.held, judge.min_bytes = channel.held_count(rep.get("held")), rep.get("min_bytes")
    t = trials.Trials(judge)
    t.run()
    if judge.gpu and judge.opts["timing"]:
        judge.stage("timing")
        window.Window(judge, t).reference_only()
    judge.verdict["status"] = "correct"
    judge.verdict["reference_checked"] = True
    held = f" and {judge.held} held-out input set(s)" if judge.held else ""
    judge.verdict["feedback"] = (f"task check passed: the reference loads, runs on {judge.opts['seeds']} "
                          f"seeds{held}, and its outputs are deterministic, finite and not constant")
    # Last, once the verdict stands, and within the time the check has left: advice must
    # not turn a valid task into a timeout (on a CPU the pass cost as much as the
    # reference stage, and a level1 check ran past its 120 s in it).
    judge.stage("exactness")
    info["reference_error"] = err = reference_error(judge, info, judge.verdict["tolerance"])
    warning = exactness_warning(err, judge.verdict["tolerance"])
    if warning:
        judge.verdict["warnings"].append(warning)

def choose_depth(judge, info, check):
    """"full" or "shapes": "auto" runs for real what this device can afford."""
    depth = check["depth"]
    if depth in ("full", "shapes"):
        return depth
    if depth != "auto":
        judge.fail("harness_error", f"unknown check_depth {depth!r}: want full, shapes or auto")
    if judge.gpu:
        return "full"
    mb = footprint(info)
    if mb is None:  # no meta pass: judge by the inputs alone
        mb = (info["input_bytes"] or float("inf")) / (1 << 20)
    flops = info["flops"] or 0
    return "full" if mb <= check["auto_mb"] and flops <= check["auto_gflop"] * 1e9 else "shapes"


def reference_error(judge, info, tol):
    """The float64 pass over the first EXACT_SEEDS seeds: the worst element's share of the
    tolerance, with its seed (kgharness.runner.exactness), or {"used": None, "note": why not}.
    Where one call is too large for the pass, over the task's held-out sets instead."""
    mb = footprint(info)
    if mb is None:
        return {"used": None, "note": "not measured: the size of one call is unknown (the meta pass failed)"}
    if exactsize.exact_pass_mb(mb) is None:     # as reservation.quotas_mb decides its reservation
        why = (f"a float64 copy of one call needs about {exactsize.exact_need_mb(mb):.0f} MiB, "
               f"more than {exactsize.EXACT_MAX_MB:.0f}")
        held = getattr(judge, "held", 0) or 0
        if not held:
            return {"used": None, "note": f"not measured: {why}"}
        # The same reference arithmetic on fewer elements (five heavy tasks' main calls
        # need 32-112 GiB; their held-out sets a few MiB): a floor under the main inputs'
        # worst, not their worst. Each set is sized by the runner, against what the
        # check's reservation holds beyond one main call.
        room = min(exactsize.EXACT_MAX_MB, mb)
        worst, n = _worst_over(judge, [{"held": i, "max_mb": room} for i in range(min(held, EXACT_SEEDS))], tol)
        if worst.get("used") is None:
            return {"used": None, "note": f"not measured: {why}; its held-out sets: {worst['note']}"[:300]}
        main = _elements(info)
        of = f" ({n} output elements; one main call has {main})" if n and main else ""
        note = f"measured on the held-out inputs only{of}: {why}"
        return dict(worst, note=(f"{note}; {worst['note']}" if worst.get("note") else note)[:300])
    first = judge.opts["seed"]
    worst, _ = _worst_over(judge, [{"seed": s} for s in range(first, first + min(EXACT_SEEDS, judge.opts["seeds"]))], tol)
    return worst


def _elements(info):
    """Floating output elements of one main call, from the meta pass; None if unknown."""
    try:
        return sum(math.prod(o["shape"]) for o in info.get("outputs") or [] if "float" in o["dtype"]) or None
    except (TypeError, KeyError):
        return None


def _label(which):
    return f"held-out set {which['held']}" if "held" in which else f"seed {which['seed']}"


def _worst_over(judge, asks, tol):
    """(The worst element over each ask's pass, how many elements the passes compared)."""
    worst, elements = None, 0
    for which in asks:
        got = _ask_exact(judge, which, tol)
        if "note" in got and got.get("used") is None:
            if worst is not None:   # out of time after a seed: what it measured stands
                return dict(worst, note=f"{_label(which)}: {got['note']}"[:300]), elements
            return {"used": None, "note": str(got["note"])[:300]}, elements
        used = got.get("used")
        if not isinstance(used, (int, float)) or isinstance(used, bool) or not math.isfinite(used):
            bad = f"the reference process answered the float64 pass with {str(used)[:40]}"
            return {"used": None, "note": bad}, elements
        elements += channel.reported_index(got.get("elements")) or 0
        if worst is None or used > worst["used"]:
            key = "held" if "held" in which else "seed"
            worst = {"used": float(used), key: which[key], "output": channel.reported_index(got.get("output")),
                     "index": channel.reported_position(got.get("index")),
                     "reference": channel.reported_float(got.get("reference")),
                     "exact": channel.reported_float(got.get("exact"))}
    return (worst or {"used": None, "note": "not measured: the check ran no seed"}), elements


def _ask_exact(judge, which, tol):
    """One pass (a seed's inputs or a held-out set's), by the deadline the check has left
    (timeout_s from the judge's start, less a margin for the verdict); past it the
    reference runner is killed (the verdict stands already) and a note says so. Its death
    is a note too."""
    # the zygote's wall-clock limit, read as the zygote reads it
    limit = options.timeout_s(judge.job.get("options"))
    left = limit - (time.monotonic() - judge.t_start) - max(EXACT_MARGIN_S, 0.1 * limit)
    if left <= 0:
        return {"used": None, "note": f"not measured: no time left of the check's {limit:g} s"}
    try:
        seq = judge.reference.request("exact", atol=tol["atol"], rtol=tol["rtol"], **which)
        rep = judge.reference.chan.reply("exact", seq, deadline=time.monotonic() + left)
    except TimeoutError:
        judge.reference.kill()
        return {"used": None, "note": f"not measured: the float64 pass took longer than the {left:.0f} s "
                                      f"the check had left of its {limit:g} s"}
    except (spawn.RunnerGone, channel.ChannelClosed, channel.Malformed) as e:
        judge.reference.kill()
        return {"used": None, "note": f"not measured: the reference process ended in the float64 pass ({str(e)[:120]})"}
    got = rep.get("exact") if rep.get("ok") is not False else None
    if not isinstance(got, dict):
        why = rep.get("task_error") or rep.get("feedback") or "no result"
        return {"used": None, "note": f"not measured: the float64 pass failed: {str(why)[:200]}"}
    return got


def exactness_warning(err, tol):
    """What a task's author should hear when its reference has spent over EXACT_WARN of its
    tolerance against its own exact answer, with the tolerance to declare; None if not.
    Both terms scaled by used / EXACT_AIM scale every element's share down by as much, so
    the same reference sits at EXACT_AIM at most under them (raising one term alone need
    not: the worst element moves)."""
    used = err.get("used")
    if used is None or used <= EXACT_WARN:
        return None
    atol, rtol = (_round_up(tol[k] * used / EXACT_AIM) for k in ("atol", "rtol"))
    fix = (f"declare ATOL = {atol:g} and RTOL = {rtol:g} in the task (module level, literal numbers)"
           if rtol <= loader.RTOL_MAX else
           f"no RTOL up to {loader.RTOL_MAX:g} covers it: compute the reference in a wider dtype")
    return (f"the reference is {used:.2f} of its tolerance ({tol['dtype']}, {tol['source']}: atol {tol['atol']:g}, "
            f"rtol {tol['rtol']:g}) from its exact answer (a float64 copy, rounded once to the output's dtype) "
            f"at output {err.get('output')} index {err.get('index')} on {_label(err)}: "
            f"{_fmt(err.get('reference'))} against {_fmt(err.get('exact'))}. A correct kernel that rounds "
            f"differently can be rejected; {fix}")


def _round_up(x):
    """x rounded up to two significant digits (0 stays 0: a task may declare ATOL = 0)."""
    if x <= 0:
        return 0.0
    step = 10.0 ** (math.floor(math.log10(x)) - 1)
    return math.ceil(x / step - 1e-9) * step


def _fmt(x):
    return f"{x:.6g}" if isinstance(x, float) else "?"

