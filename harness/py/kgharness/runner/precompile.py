"""Compiling a candidate's Triton kernels before its evaluation holds device memory.

A candidate's first call paid for Triton's work: compiling each kernel and building, with
the system C compiler, a launcher for each kernel signature. On an H200 that was the
median first call of 1.5 s (heavy GRPO groups, 7 x 16, 2026-12-03), all of it after
admission, with the evaluation's device memory reserved and its GPU work not started.
Here the candidate runner, asked before the judge waits for memory, forks a child that:

- opens no GPU device file: a Landlock layer under the runner's (landlock.
  compile_only_rules) leaves no CUDA context possible, so no device memory is held
  outside admission; it writes only the runner's Triton cache and a directory of its own;
- runs the task's inputs and the candidate's forward on the meta device, with Triton made
  to compile for the judge's GPU instead of launching, every autotune config compiled,
  then the held-out input sets the same way (in CPU mode, where Triton's interpreter runs
  the kernels, it only imports the submission and builds its model);
- builds each compiled kernel's launcher into the same cache.

The runner's first call then finds both in its Triton cache. The child decides nothing:
it runs candidate code in the candidate's own walls and process group (stopped and
killed with the runner), touches only what the candidate's own runner reads, and what it
reports is diagnostics. Its time is the evaluation's active time before admission, so
the compile budget counts it as it counted the first call's compile. A candidate that
fails here (it needs real data, or a device) is compiled by its first call as before.
"""

import json
import os
import time

from . import launchers
from .. import options as opts
from .. import procs

KINDS = ("auto", "on", "off")
ENV = "KERNELGATE_PRECOMPILE"
WINDOWS_ENV = "KERNELGATE_PRECOMPILE_IN_WINDOWS"
# compile_timeout_s when a job does not set it, by mode (docs/protocol.md): none on a CPU, where
# the interpreter's first call is the kernel's run, not its compile. On a GPU it is wall
# time like timeout_s, so it sits well above the slowest honest compile measured at full
# concurrency (51 s on an H200): a load-made slow compile must not cost a reward.
# The zygote's watchdog enforces it; the runner waits for the child half of it (the first
# call has the other half), WAIT_S where there is none (CPU mode).
DEFAULT_BUDGET_S = {"gpu": 90.0}
WAIT_S = 60.0
REPORT_LIMIT = 16384    # a few counts and up to launchers.PER_EVALUATION signatures
# The GPU compiled for in CPU mode (KERNELGATE_PRECOMPILE=on): an H100/H200's.
CPU_TARGET = [9, 0]


def setting():
    """auto (the default): on a GPU only; on: in CPU mode as well (the child imports the
    submission and builds its model, so tests see it); off."""
    v = os.environ.get(ENV, "auto").strip().lower()
    return v if v in KINDS else "auto"


def invalid():
    """The environment's value when it is none of KINDS (the zygote logs it), else None."""
    v = os.environ.get(ENV)
    return v if v is not None and v.strip().lower() not in KINDS else None


def through_windows():
    """Whether an evaluation in its precompile stage keeps running while another is timed
    (KERNELGATE_PRECOMPILE_IN_WINDOWS, on by default): only its child works then, with
    no GPU device file and at idle priority (_idle_priority)."""
    return os.environ.get(WINDOWS_ENV, "on").strip().lower() != "off"


def budget_s(options, mode):
    """The job's compile budget in seconds: its compile_timeout_s, where that is a positive
    number, else the mode's default; None where there is none."""
    return opts.positive((options or {}).get("compile_timeout_s"), DEFAULT_BUDGET_S.get(mode))


def wait_s(options, gpu):
    """How long the runner waits for the child: half the job's compile budget, or WAIT_S
    where it has none."""
    budget = budget_s(options, "gpu" if gpu else "cpu_interpreter")
    return budget / 2 if budget else WAIT_S


def wanted(gpu):
    s = setting()
    return s == "on" or (s == "auto" and gpu)


def run(rdir, job, capability, seed, cap_autotune, wait_s=WAIT_S):
    """In the runner (no CUDA context yet): fork the child, wait for it (at most wait_s:
    then it is killed, and the first call compiles), return its report.
    capability: [major, minor] of the judge's GPU."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        code = 1
        try:
            os.closerange(3, w)              # the judge's channel above all: nothing forged on it
            os.closerange(w + 1, 65536)
            rep = _child(rdir, job, capability, seed, cap_autotune)
            os.write(w, json.dumps(rep).encode()[:REPORT_LIMIT])
            code = 0
        except BaseException:  # noqa: BLE001 - the child ends here whatever happened
            pass
        finally:
            os._exit(code)
    os.close(w)
    t0 = time.monotonic()
    # The child's exit, not the pipe's end: a process it forked may hold the pipe open.
    status = _wait(pid, t0 + wait_s)
    os.set_blocking(r, False)
    try:
        raw = os.read(r, REPORT_LIMIT)
    except BlockingIOError:
        raw = b""
    finally:
        os.close(r)
    left = _end_leftovers()
    out = {"ms": round((time.monotonic() - t0) * 1e3, 3),
           "exit": os.waitstatus_to_exitcode(status) if status is not None else None}
    if status is None:
        out["stopped"] = f"the compile-only child was still running after {wait_s:g} s: killed"
    if left:
        out["killed"] = left
    try:
        rep = json.loads(raw) if raw else {}
    except ValueError:
        rep = {}
    if isinstance(rep, dict):
        for k in ("kernels", "launchers", "launchers_found"):
            if isinstance(rep.get(k), int):
                out[k] = rep[k]
        if isinstance(rep.get("signatures"), list):   # the zygote checks each (kgharness.runner.launchers)
            out["signatures"] = rep["signatures"][:launchers.PER_EVALUATION]
        if isinstance(rep.get("stopped"), str):
            out["stopped"] = rep["stopped"][:300]
    return out


def _wait(pid, deadline):
    """The child's wait status, or None once deadline passed (then it is killed and reaped).
    A candidate's compile may take long; a child that hangs (on H200, 2026-12-03, one in
    400 level2 evaluations sat in this stage until its 90 s compile budget ran out) must
    not take the evaluation with it."""
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        if time.monotonic() >= deadline:
            procs.kill_pid(pid)
            os.waitpid(pid, 0)
            return None
        time.sleep(0.01)


def _end_leftovers():
    """Kill what the child left in this runner's process group (kgharness.sandbox.pgroup keeps
    them there; procs.scan, as the zygote attributes them): before its CUDA context the
    runner has no other process. Returns how many there were."""
    me, grp, killed = os.getpid(), os.getpgrp(), set()
    if grp != me:      # not a group of its own (never in a zygote): nothing safe to kill
        return 0
    try:
        if os.readlink("/proc/self") != str(me):
            return 0   # /proc counts in another PID namespace (kgharness.sandbox.procfs): no scan to trust
    except OSError:
        return 0
    for _ in range(3):   # a fork bomb may outrun one pass
        left = procs.scan(os.getppid(), {me})[0][me][0] - {me}
        if not left:
            break
        for p in left:
            procs.kill_pid(p)
            killed.add(p)
        time.sleep(0.01)
    return len(killed)


def _idle_priority():
    """SCHED_IDLE for good: the child and what it runs get a CPU only when nothing else on
    it wants one, so during another evaluation's timing window it takes nothing from the
    window's processes. Nice 19 and RLIMIT_NICE 0 first: without CAP_SYS_NICE the
    candidate cannot leave SCHED_IDLE (sched(7)) or raise its priority."""
    import resource
    os.setpriority(os.PRIO_PROCESS, 0, 19)
    resource.setrlimit(resource.RLIMIT_NICE, (0, 0))
    os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))


def _child(rdir, job, capability, seed, cap_autotune):
    from ..sandbox import landlock
    try:
        _idle_priority()
    except OSError as e:
        return {"stopped": f"no idle priority here ({e}): nothing compiled ahead"}
    own = os.path.join(rdir, "precompile")
    os.makedirs(own, mode=0o700, exist_ok=True)
    cache = os.environ.get("TRITON_CACHE_DIR") or os.path.join(rdir, "triton-cache")
    os.makedirs(cache, mode=0o700, exist_ok=True)
    ok, why = landlock.apply_landlock(rdir, rules=landlock.compile_only_rules(rdir, (own, cache)))
    if not ok:
        return {"stopped": f"no GPU-less wall here ({why}): nothing compiled ahead"}
    # Belt and braces behind the wall; the C compiler's temp files go to the child's own dir.
    os.environ.update(CUDA_VISIBLE_DEVICES="", TMPDIR=own)
    import tempfile
    tempfile.tempdir = None
    kernels = []
    rep = {"kernels": 0, "launchers": 0}
    seeded = launchers.ready(cache)      # before the candidate's code runs: what the runner started with
    try:
        # Triton's interpreter (CPU mode) made its kernels at import: nothing to compile,
        # but the submission is still imported and built here, as on a GPU.
        interpret = _interpreting()
        if not interpret:
            _compile_only(capability, kernels)
        cap_autotune([])
        _meta_forward(own, job, seed, run=not interpret)
        if interpret:
            rep["stopped"] = "Triton's interpreter compiles nothing"
    except BaseException as e:  # noqa: BLE001 - candidate code: whatever stopped it
        rep["stopped"] = f"{type(e).__name__}: {str(e)[:200]}"
    rep["kernels"] = len({k.hash for k in kernels})
    rep["launchers"] = _launchers(kernels, rep, cache, seeded)
    return rep


class _CompileOnly:
    """The part of Triton's active driver that compiling needs: no device, no stream."""

    def __init__(self, target):
        self.target = target

    def get_current_device(self):
        return 0

    def get_current_stream(self, device=None):
        return 0

    def get_current_target(self):
        return self.target


def _interpreting():
    from triton import knobs
    return bool(knobs.runtime.interpret)


def _compile_only(capability, kernels):
    from triton.backends.compiler import GPUTarget
    from triton.runtime import autotuner, driver, jit
    major, minor = (int(x) for x in capability)
    driver.set_active(_CompileOnly(GPUTarget("cuda", major * 10 + minor, 32)))
    launch = jit.JITFunction.run

    def compile_instead(self, *args, grid, warmup, **kwargs):
        k = launch(self, *args, grid=grid, warmup=True, **kwargs)
        if k is not None:
            kernels.append(k)
        return k

    def every_config(self, *args, **kwargs):
        kwargs.pop("warmup", None)
        self.nargs = dict(zip(self.arg_names, args))
        for config in self.prune_configs(kwargs):
            self.fn.run(*args, **kwargs, **config.all_kwargs())
        self.nargs = None

    jit.JITFunction.run = compile_instead
    autotuner.Autotuner.run = every_config


def _meta_forward(own, job, seed, run=True):
    import torch
    from .. import inputs as I
    from . import loader
    mod = loader.load_task(job.get("task") or {}, own)
    _, do_import = loader.load_candidate(job.get("code"), own)
    module = do_import()
    with torch.device("meta"):
        I.seed_all(seed)
        init_inputs = list(mod.get_init_inputs())
        model = module.ModelNew(*init_inputs)
    if not run:
        return
    sets = [I.make_inputs(mod.get_inputs, seed, "meta")]
    held = getattr(mod, "get_held_out_inputs", None)
    if held is not None:
        with torch.device("meta"):
            sets += [[I.to_device(x, "meta") for x in s] for s in held()]
    with torch.no_grad(), torch.device("meta"):
        for inputs in sets:
            model(*inputs)


def _launchers(kernels, rep, cache, seeded):
    """Each distinct kernel's launcher into the cache (the C compiler, per signature), unless
    it is there already: from the zygote's trusted cache the runner started with (seeded,
    counted as found; kgharness.runner.launchers), or built for another specialization of the
    same signature. The signatures go in the report for the zygote to build."""
    built, seen = 0, set()
    try:
        from triton.backends.nvidia.driver import CudaLauncher
    except BaseException as e:  # noqa: BLE001
        rep.setdefault("stopped", f"no launcher: {type(e).__name__}: {str(e)[:200]}")
        return 0
    sigs = rep.setdefault("signatures", [])
    for k in kernels:
        if k.hash in seen:
            continue
        seen.add(k.hash)
        try:
            sig = launchers.signature_of(k)
            if sig is not None and sig not in sigs and len(sigs) < launchers.PER_EVALUATION:
                sigs.append(sig)
            parsed = launchers.parse(sig)
            at = launchers.entry(parsed) if parsed is not None else None
            had = at is not None and launchers.holds(cache, at)   # seeded, or built for a twin
            CudaLauncher(k.src, k.metadata)    # one it has: Triton loads it, its compiler not run
            if at is not None and at in seeded:
                rep["launchers_found"] = rep.get("launchers_found", 0) + 1
            elif not had:
                built += 1
        except BaseException as e:  # noqa: BLE001 - no libcuda (CPU mode): the first call builds it
            rep.setdefault("stopped", f"launcher: {type(e).__name__}: {str(e)[:200]}")
    return built
