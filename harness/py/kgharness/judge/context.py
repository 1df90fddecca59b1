"""The judge's view of its supervisor: stage reports, the GPU timing lock, runners.

The zygote gives each judge a PipeContext (kgharness.judge.process); tests that run a judge
without a zygote use LocalContext (no lock: nothing else runs). Either way a runner is
a real forked process (kgharness.runner.spawn): the judge never runs task or candidate code
in its own process, in tests included.
"""

import contextlib
import time


class Context:
    """What the judge may ask of whoever runs it."""

    mode = "cpu_interpreter"   # or "gpu"
    device = "cpu"             # "cuda:0" in GPU mode
    tmpdir = None              # private temp dir of this evaluation (str)
    sandbox = {"level": "none", "detail": "in-process"}

    def stage(self, name):
        """Report that the evaluation entered stage `name` (used for timeout feedback)."""

    def compiled(self):
        """Report that the candidate's first call returned: its load, compile and autotune
        are over, and with them the compile budget (compile_timeout_s)."""

    def precompiled(self):
        """The candidate's compile-only child is done (kgharness.runner.precompile): returns once
        the evaluation may go on, stopped first if another evaluation's window is open."""

    def launchers(self, signatures):
        """The candidate's kernel signatures, as its precompile child named them (untrusted):
        the zygote builds their launchers for later runners (kgharness.runner.launchers)."""

    def reserve(self, mb, contexts=False):
        """Wait until the GPU has room for mb MiB more (kgharness.zygote.admission): (MiB granted,
        True when the evaluation runs alone); contexts: only the runners' CUDA contexts,
        ahead of the rest. Nothing else runs here: at once, not alone."""
        return float(mb), False

    def reserve_first(self, mb, later, host_mb=0.0):
        """Like reserve, but the zygote may grant it without `later` MiB (its reference's
        share, kgharness.zygote.admission), or without host_mb (the same share) when the reference
        host it inherited is ready by then: (MiB granted, alone, True when it is owed)."""
        granted, alone = self.reserve(mb)
        return granted, alone, False

    def reserve_more(self):
        """Wait until what reserve_first left owed is granted too: MiB granted."""
        return 0.0

    def reserve_hosted(self, mb, ref_mb):
        """Like reserve, without the reference's share ref_mb (and its context): a
        reference host holds it (kgharness.zygote.refhosts)."""
        return self.reserve(mb)

    def reserve_less(self, ref_mb):
        """Give back the reference's share of what was granted: a host is its reference now."""

    def inherits_host(self):
        """Whether this judge inherited a reference host (kgharness.zygote.refhosts)."""
        return False

    def host_ask(self, shared):
        """What to do with the reference host this judge inherited (kgharness.zygote.refhosts):
        0 none, 1 use it in the window, 2 load it and use it as the reference runner."""
        return 0

    def host_proc(self):
        """The judge's handle on its reference host (a refhost.HostProc)."""
        raise RuntimeError("no reference host here")

    def host_ok(self, mb):
        """The host this evaluation created is sound and holds mb MiB."""

    def host_mem(self, mb):
        """The host lent to this evaluation's window held mb MiB."""

    def measured(self, mb):
        """The evaluation has used mb MiB of device memory through its correctness trials
        (the zygote re-sizes its task's reservations: kgharness.zygote.admission)."""

    def stored(self, mb, version):
        """The judge service's shared store holds mb MiB as of its version-th change."""

    def uses_share(self, key):
        """This evaluation's task is key in the shared store: while it runs, the store keeps
        that entry when it gives way to evaluations waiting for memory (kgharness.zygote)."""

    @contextlib.contextmanager
    def timing_lock(self):
        """Hold the GPU's timing lock: every other evaluation on it is stopped meanwhile."""
        yield 0.0

    def seal(self):
        """The judge's last walls, once its runners are forked (nothing here)."""

    def buffer_ops(self):
        """Where the judge's buffers live and its comparisons run (kgharness.judge.bufferops)."""
        from . import bufferops
        return bufferops.Local(self.mode, self.device)

    def spawn(self, role, job):
        """Fork a runner ("reference" or "candidate") for job; a spawn.RunnerProc."""
        from ..runner import spawn
        return spawn.start(role, job, self.mode, self.device, self.tmpdir)


class LocalContext(Context):
    """For tests: no lock contention, stages recorded in a list, real forked runners."""

    def __init__(self, mode="cpu_interpreter", device="cpu", tmpdir=None):
        self.mode = mode
        self.device = device
        self.tmpdir = tmpdir
        self.stages = []

    def stage(self, name):
        self.stages.append((name, time.monotonic()))

    def compiled(self):
        self.stages.append(("compiled", time.monotonic()))
