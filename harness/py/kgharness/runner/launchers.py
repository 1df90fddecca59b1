"""Triton's C launchers, built once by the zygote and found ready by every later runner.

Triton 3.6 builds one launcher per kernel signature with the system C compiler: about
0.25 s of a candidate's CPU on an H200's host, 1-3 per evaluation (launcher_cost.py,
2026-12-01). Its C source is generated from the argument types alone (every pointer the
same), so evaluations of other candidates, and of other tasks, need the same few.

A runner's Triton cache is private (the cache_poison defence): nothing a candidate wrote
is ever loaded by another evaluation. This keeps that. The candidate side only *names*
signatures (the precompile child's report, through the judge: untrusted data); the
zygote checks each against Triton's argument types, generates the source with Triton's
own `make_launcher`, and a forked builder that never ran candidate code compiles it into
a staging cache. The zygote then renames each finished entry into the trusted Triton
cache (kgharness.runner.warmup) that every new runner copies at its start: a rename, so a copy
in progress sees an entry whole or not at all, and nothing there is ever changed or
removed while the zygote runs. A runner whose kernel has that signature finds its
launcher under the key Triton computes from the same source, and skips the compiler.

The builder runs one batch at a time, is stopped with the evaluations during every
timing window, and builds at most LIMIT launchers in a zygote's life (PER_EVALUATION
from any one evaluation): a candidate that names many signatures costs the zygote a
bounded amount of compiling, and never anyone's verdict (a runner that finds no launcher
builds its own, as before).
"""

import hashlib
import os
import re
import signal

from .. import procs

ENV = "KERNELGATE_SHARED_LAUNCHERS"       # on (default, GPU mode) or off
LIMIT = 256                               # launchers built in a zygote's life
PER_EVALUATION = 8                        # signatures one evaluation may name
MAX_ARGS = 64                             # a signature's arguments, tuples flattened
NAME = "__triton_launcher"
SCALARS = frozenset(("i1", "i8", "i16", "i32", "i64", "u1", "u8", "u16", "u32", "u64",
                     "fp16", "bf16", "fp32", "f32", "fp64"))
POINTER = re.compile(r"\*k?[a-z0-9]{1,12}\Z")


def enabled():
    return os.environ.get(ENV, "on").strip().lower() != "off"


def signature_of(kernel):
    """In the precompile child: a compiled kernel's launcher signature as JSON (a list of
    Triton type strings, tuples as lists), or None when its launcher is not shared
    (tensor descriptors: their launcher depends on more than the types)."""
    if getattr(kernel.metadata, "tensordesc_meta", None):
        return None

    def plain(t):
        return [plain(x) for x in t] if isinstance(t, tuple) else t
    return [plain(t) for t in kernel.src.signature.values()]


def parse(sig):
    """An untrusted signature (JSON) as make_launcher takes its values, or None: only
    Triton's scalar types, pointers and constexpr, tuples two deep."""
    count = [0]

    def one(t, depth):
        if isinstance(t, str):
            count[0] += 1
            if t == "constexpr" or t in SCALARS or POINTER.match(t):
                return t
        elif isinstance(t, list) and depth < 2 and 0 < len(t) <= MAX_ARGS:
            return tuple(one(x, depth + 1) for x in t)
        raise ValueError(t)
    if not isinstance(sig, list) or len(sig) > MAX_ARGS:
        return None
    try:
        out = [one(t, 0) for t in sig]
    except (ValueError, TypeError, RecursionError):
        return None
    return out if count[0] <= MAX_ARGS else None


def source(sig):
    """Triton's own launcher source for a parsed signature (constants do not enter it)."""
    from triton.backends.nvidia.driver import make_launcher
    return make_launcher({}, dict(enumerate(sig)), None)


def entry(sig):
    """The Triton cache entry (a directory name) where compile_module_from_src looks for
    this signature's launcher."""
    from triton.runtime.build import platform_key
    from triton.runtime.cache import _base32
    return _base32(hashlib.sha256((source(sig) + platform_key()).encode("utf-8")).hexdigest())


def holds(cache_dir, at):
    """Whether cache_dir's entry `at` (entry()) holds a launcher."""
    return os.path.isfile(os.path.join(cache_dir, at, NAME + _suffix()))


def ready(cache_dir):
    """The entries of cache_dir that hold a launcher (in a runner: what it started with)."""
    try:
        return {e for e in os.listdir(cache_dir) if holds(cache_dir, e)}
    except OSError:
        return set()


class Builder:
    """The zygote's side: take signatures, build their launchers in a forked child, add
    them to the trusted cache. Single-threaded, driven by the zygote's loop."""

    def __init__(self, trusted_dir, staging_dir, log=lambda msg: None):
        self.trusted, self.staging, self.log = trusted_dir, staging_dir, log
        self.known = set()          # source hashes queued, built or failed
        self.queue = []             # sources to build
        self.batch = []             # sources the running builder builds
        self.pid = None
        self.paused = False
        self.built = self.refused = self.failed = 0

    def offer(self, sigs):
        """A judge's report of its candidate's signatures (untrusted). Returns how many
        were queued."""
        if not isinstance(sigs, list):
            return 0
        queued = 0
        for raw in sigs[:PER_EVALUATION]:
            sig = parse(raw)
            if sig is None:
                self.refused += 1
                continue
            try:
                src = source(sig)
            except Exception:  # noqa: BLE001 - a type make_launcher does not know
                self.refused += 1
                continue
            h = hashlib.sha256(src.encode()).hexdigest()
            if h in self.known or len(self.known) >= LIMIT:
                continue
            self.known.add(h)
            self.queue.append(src)
            queued += 1
        return queued

    def step(self, own_fds=tuple):
        """Start a builder for what is queued, unless one runs or a window is open.
        own_fds(): the zygote's descriptors, closed in the builder."""
        if self.pid is not None or not self.queue or self.paused:
            return
        self.batch, self.queue = self.queue, []
        os.makedirs(self.staging, mode=0o700, exist_ok=True)
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                os.setpgid(0, 0)
                procs.leave_zygote(own_fds())
                os.nice(5)
                code = _build(self.staging, self.batch)
            finally:
                os._exit(code)
        try:
            os.setpgid(pid, pid)       # as the child does: stoppable from the first instant
        except OSError:
            pass
        self.pid = pid

    def pids(self):
        return {self.pid} if self.pid is not None else set()

    def hold(self, timing):
        """While a timing window is open the builder and its compiler are stopped, with the
        evaluations, and no new one starts."""
        if timing != self.paused:
            self.paused = timing
            self._signal(signal.SIGSTOP if timing else signal.SIGCONT)

    def _signal(self, sig):
        if self.pid is not None:
            try:
                os.killpg(self.pid, sig)
            except OSError:
                pass

    def reaped(self, pid, status):
        """The zygote reaped pid: if it was the builder, publish what it built."""
        if pid != self.pid:
            return False
        self.pid = None
        if os.waitstatus_to_exitcode(status) != 0:
            self.log(f"launcher builder exited with status {status}")
        added = self._publish()
        self.built += added
        self.failed += max(0, len(self.batch) - added)
        self.batch = []
        return True

    def _publish(self):
        """Rename each finished staging entry into the trusted cache: whole or absent to a
        runner copying it meanwhile."""
        suffix = _suffix()
        added = 0
        try:
            entries = os.listdir(self.staging)
        except OSError:
            return 0
        for key in entries:
            src = os.path.join(self.staging, key)
            if not os.path.isfile(os.path.join(src, NAME + suffix)):
                continue
            for junk in os.listdir(src):       # Triton's lock file, an unfinished temp dir
                if junk != NAME + suffix:
                    _remove(os.path.join(src, junk))
            dst = os.path.join(self.trusted, key)
            if os.path.exists(dst):              # published by an earlier batch
                _remove(src)
                added += 1
                continue
            try:
                os.rename(src, dst)
                added += 1
            except OSError as e:
                self.log(f"launcher not published: {e}")
        return added

    def shutdown(self):
        self.log(f"shared launchers: {self.built} built, {self.failed} failed, "
                 f"{self.refused} signatures refused")
        if self.pid is None:
            return
        self._signal(signal.SIGKILL)
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass
        self.pid = None


def _build(staging, sources):
    """In the builder (forked from the zygote, no candidate code): Triton's own build of
    each source into the staging cache. A launcher that builds but cannot be loaded here
    (no libcuda in a test) is still in the cache: the runner that loads it is where it
    must work, and one that cannot load it builds its own."""
    os.environ["TRITON_CACHE_DIR"] = staging
    os.environ["TMPDIR"] = staging
    import tempfile
    tempfile.tempdir = None
    from triton import knobs
    from triton.backends.nvidia.driver import include_dirs, libraries, library_dirs
    from triton.runtime.build import compile_module_from_src
    knobs.cache.dir = staging
    failed = 0
    for src in sources:
        try:
            compile_module_from_src(src=src, name=NAME, library_dirs=library_dirs(),
                                    include_dirs=include_dirs, libraries=libraries)
        except ImportError:
            pass
        except Exception:  # noqa: BLE001 - one source that fails does not stop the rest
            failed += 1
    return 0 if not failed else 3


def _suffix():
    import sysconfig
    return sysconfig.get_config_var("EXT_SUFFIX")


def _remove(path):
    import shutil
    if os.path.isdir(path):
        shutil.rmtree(path, ignore_errors=True)
    else:
        try:
            os.remove(path)
        except OSError:
            pass

