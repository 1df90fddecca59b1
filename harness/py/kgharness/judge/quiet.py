"""A timing window's quiet: both runners pinned to the CPU the judge runs on, and no
garbage collection pause inside a measurement (kgharness.judge.window)."""

import contextlib
import gc
import os

from .. import procs


def pin(runners):
    """Both runners' main threads on one CPU for the window: the one the judge runs on
    when the window opens. A per-process difference (a core's clock, its distance to the
    GPU) showed on an H200 as one side's overhead steadily 0.2-0.4 ms above the other's
    in one evaluation. Not one fixed CPU: the zygotes of other GPUs (and of parallel test
    workers) time their own evaluations at the same moment, and a fixed CPU put their
    runners on one core (honest kernels flagged `forge` by 0.7-1.0 ms). Best effort:
    where the kernel refuses, nothing is pinned. Returns what to restore."""
    cpu = _current_cpu()
    if cpu is None:
        return []
    saved = []
    for r in runners:
        if r is None:
            continue
        try:
            before = os.sched_getaffinity(r.pid)
            os.sched_setaffinity(r.pid, {cpu})
            saved.append((r.pid, before))
        except OSError:
            pass
    return saved


def _current_cpu():
    """The CPU this process last ran on (stat(5) field 39), or None."""
    try:
        return int(procs.stat_fields()[36])
    except (TypeError, IndexError, ValueError):
        return None


def unpin(saved):
    for pid, cpus in saved:
        try:
            os.sched_setaffinity(pid, cpus)
        except OSError:
            pass


@contextlib.contextmanager
def no_gc():
    """No garbage collection pause inside a wall-clock measurement (runners do the same)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
