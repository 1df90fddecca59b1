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

    @contextlib.contextmanager
    def timing_lock(self):
        """Hold the per-GPU exclusive timing lock for the duration of the block."""
        yield 0.0


class LocalContext(Context):
    """In-process context for tests: no lock contention, stages recorded in a list."""

    def __init__(self, mode="cpu_interpreter", device="cpu", tmpdir=None):
        self.mode = mode
        self.device = device
        self.tmpdir = tmpdir
        self.stages = []

    def stage(self, name):
        self.stages.append((name, time.monotonic()))
