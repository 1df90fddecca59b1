"""The child's view of its supervisor: stage reports, the GPU timing lock, device info.

The zygote gives each child a PipeContext (kgharness.child); tests that run the
evaluator in-process use LocalContext. evaluate() only ever talks to this interface.
"""

import contextlib
import time


class Context:
    """What evaluate() may ask of whoever runs it."""

    mode = "cpu_interpreter"   # or "gpu"
    device = "cpu"             # "cuda:0" in GPU mode
    tmpdir = None              # private temp dir of this evaluation (str)
    sandbox = {"level": "none", "detail": "in-process"}

    def stage(self, name):
        """Report that the evaluation entered stage `name` (used for timeout feedback)."""

    def taint(self, flag, detail):
        """Report a hack flag the moment it is seen, before candidate code can act on
        what it got (a forged verdict written afterwards then still loses)."""

    @contextlib.contextmanager
    def timing_lock(self):
        """Hold the per-GPU timing lock exclusively: no other child's GPU work runs meanwhile."""
        yield 0.0

    @contextlib.contextmanager
    def gpu_lock(self):
        """Hold the per-GPU lock shared: GPU work of several children may overlap,
        but never with somebody's timing."""
        yield 0.0


class LocalContext(Context):
    """In-process context for tests: no lock contention, stages recorded in a list."""

    def __init__(self, mode="cpu_interpreter", device="cpu", tmpdir=None):
        self.mode = mode
        self.device = device
        self.tmpdir = tmpdir
        self.stages = []
        self.taints = []

    def stage(self, name):
        self.stages.append((name, time.monotonic()))

    def taint(self, flag, detail):
        self.taints.append((flag, detail))
