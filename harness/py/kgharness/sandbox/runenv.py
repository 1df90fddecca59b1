"""What a runner's environment holds once its walls are up.

The zygote starts with an allowlisted environment (harness/zygoteenv.go: what Python,
torch, Triton and CUDA need, and the harness's own KERNELGATE_* settings), and every
process it forks inherits it. A runner, which runs task and candidate code, keeps the
toolchain's part and its own HOME, TMPDIR and Triton cache (kgharness.runner.spawn.private_env),
and drops the harness's settings: they are for the zygote and the judge (the data
directory's path, the sandbox's extra read paths, feature switches), and its sandbox
rules were built from them already (kgharness.sandbox.readpaths.pin keeps them for what it
forks later).

Dropping a variable from os.environ does not erase it from /proc/self/environ: that
file shows the block the zygote was exec'd with, which every fork inherits. wipe zeroes
the dropped variables' strings there. Only theirs: a library that kept a pointer from
getenv into that block (CUDA's, read at first use in a runner) still finds what it kept.
"""

import ctypes
import os

from . import readpaths

HARNESS_PREFIX = "KERNELGATE_"


def drop_harness():
    """Remove every KERNELGATE_* variable from this process's environment (after pinning
    the sandbox policy's) and from its exec-time block. Returns the names dropped."""
    readpaths.pin()
    dropped = sorted(k for k in os.environ if k.startswith(HARNESS_PREFIX))
    for k in dropped:
        del os.environ[k]          # unsetenv: glibc's environ no longer points at the block's copy
    wipe(HARNESS_PREFIX)
    return dropped


def _block():
    """(start, end) of the environment block this process was exec'd with (stat(5)
    fields 50 and 51), or None."""
    try:
        with open("/proc/self/stat", "rb") as f:
            raw = f.read()
        fields = raw[raw.rfind(b")") + 2:].split()
        start, end = int(fields[47]), int(fields[48])
    except (OSError, ValueError, IndexError):
        return None
    return (start, end) if 0 < start < end else None


def wipe(prefix):
    """Zero the strings of the exec-time block whose name starts with prefix (the caller
    has unset them). Returns how many it zeroed."""
    span = _block()
    if span is None:
        return 0
    block = ctypes.string_at(span[0], span[1] - span[0])
    n, off = 0, 0
    for entry in block.split(b"\0"):
        if entry.startswith(prefix.encode()):
            ctypes.memset(span[0] + off, 0, len(entry))
            n += 1
        off += len(entry) + 1
    return n
