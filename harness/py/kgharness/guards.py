"""Runtime defences around candidate code: snapshots, audit hook, launch counting, threads.

What a Guard compares before and after the candidate's code (the harness's callables by
identity, the global precision flags) is captured at import time by kgharness.snapshot.
The audit hook and the launch counter are installed once per process (a hook cannot be
removed) and only act while a Guard window is open.
"""

import os
import sys
import sysconfig
import threading

import torch

from . import snapshot


class _State:
    """Process-wide: which file is the candidate's, whether a window is open, counters."""
    active = False
    counting = False
    cand_file = None
    tmpdir = None
    writable = []         # the temp dir, and the private /tmp and /dev/shm when they exist
    launches = 0
    launched_names = set()
    events = []           # (flag, detail) seen by the audit hook
    compile_calls = 0
    taint = None          # ctx.taint: streams audit findings as they happen
    cov = None            # [(start, end)] CUDA events around own launches, while measuring coverage
    streams = None        # {handle: stream} of own launches, while a correctness call is checked
    busy = set()          # thread idents inside the hook (re-entrancy guard)
    ablation = None       # the ablated call's kgharness.runner.ablation.Ablation: own launches skipped


S = _State


_Event = getattr(torch.cuda, "Event", None)
_record = getattr(_Event, "record", None)
current_stream = getattr(torch.cuda, "current_stream", None)
stream_query = getattr(getattr(torch.cuda, "Stream", None), "query", None)


def _make_counting_run(orig):
    def run(self, *args, **kwargs):
        code = getattr(getattr(self, "fn", None), "__code__", None)
        if not (S.counting and not kwargs.get("warmup") and code is not None
                and code.co_filename == S.cand_file):
            return orig(self, *args, **kwargs)
        if S.ablation is not None:
            S.ablation.skip(args, kwargs)
            return None
        if S.cov is None:
            result = orig(self, *args, **kwargs)
        else:
            # Events on the launching stream bracket exactly this kernel: the
            # coverage measurement needs no profiler (CUPTI costs seconds per child).
            start, end = _Event(enable_timing=True), _Event(enable_timing=True)
            _record(start)
            result = orig(self, *args, **kwargs)
            _record(end)
            S.cov.append((start, end))
        # Counted only once it returned: a launch that raises (and a torch fallback
        # behind try/except) did no work.
        S.launches += 1
        S.launched_names.add(code.co_name)
        if S.streams is not None and current_stream is not None:
            st = current_stream()
            S.streams.setdefault(st.cuda_stream, st)
        return result
    run._kg_counting = True
    return run


def _install_counters():
    for cls in snapshot.jit_classes():
        orig = vars(cls).get("run")
        if orig is not None and not getattr(orig, "_kg_counting", False):
            cls.run = _make_counting_run(orig)


def _watch(owner, name, on_call):
    """Wrap owner.name so that calls from candidate code (a window is open) run on_call."""
    orig = getattr(owner, name, None)
    if orig is None or getattr(orig, "_kg_watch", False):
        return

    def watched(*args, **kwargs):
        if S.active:
            on_call()
        return orig(*args, **kwargs)
    watched._kg_watch = True
    watched.__wrapped__ = orig
    watched.__doc__ = orig.__doc__
    setattr(owner, name, watched)


def _count_compile():
    S.compile_calls += 1


def _install_call_watches():
    _watch(torch, "compile", _count_compile)
    # The harness caps each child's share of the GPU before the candidate exists; a
    # candidate raising its own cap is taking memory its neighbours were promised.
    _watch(torch.cuda, "set_per_process_memory_fraction",
           lambda: _emit(("resource", "torch.cuda.set_per_process_memory_fraction")))


# ---- audit hook --------------------------------------------------------------------
def _both(paths):
    """Each path as given and resolved. Resolved now, in the zygote: a runner's private /tmp
    hides the links its code objects' file names go through (a venv reached by a symlink
    under /tmp, as in CI), so resolving them there would misname torch's own frames."""
    return tuple({q for p in paths for q in (os.path.abspath(p), os.path.realpath(p))})


_STDLIB = _both([sysconfig.get_paths()["stdlib"]])
_TRUSTED = _both([sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"],
                  os.path.dirname(os.path.dirname(torch.__file__)), os.path.dirname(os.path.abspath(__file__))])
_INTROSPECTION = {"gc.get_objects", "gc.get_referrers", "gc.get_referents", "sys._current_frames",
                  "sys.settrace", "sys.setprofile", "ctypes.string_at", "ctypes.wstring_at",
                  "ctypes.cdata", "sys._current_exceptions"}
_ESCAPE = {"socket.connect", "socket.bind", "socket.sendto", "subprocess.Popen", "os.system",
           "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty", "pty.spawn", "os.exec"}
_PATH_EVENTS = {"os.remove", "os.rmdir", "os.rename", "os.mkdir", "os.symlink", "os.link",
                "os.chmod", "os.truncate", "shutil.rmtree"}
_EXIT = {"os.kill", "os.killpg", "signal.pthread_kill"}
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
_filecache = {}


def _kind(filename):
    """'stdlib', 'trusted' or 'untrusted' for a code object's file name."""
    k = _filecache.get(filename)
    if k is None:
        if filename == S.cand_file:
            k = "untrusted"
        elif filename.startswith("<frozen"):
            k = "stdlib"
        else:
            names = (filename, os.path.realpath(filename)) if filename.startswith("/") else (filename,)
            if any(n.startswith(p + os.sep) for n in names for p in _TRUSTED):
                k = "trusted"
            elif any(n.startswith(p + os.sep) for n in names for p in _STDLIB):
                k = "stdlib"
            else:
                k = "untrusted"   # candidate file, exec'd strings, files it wrote
        if filename != S.cand_file:
            _filecache[filename] = k
    return k


def _innermost_untrusted(frame):
    """True when the innermost non-stdlib frame is not torch/triton/harness code."""
    while frame is not None:
        k = _kind(frame.f_code.co_filename)
        if k != "stdlib":
            return k == "untrusted"
        frame = frame.f_back
    return False


def _outside_tmp(path):
    if isinstance(path, int):
        return False
    try:
        p = os.path.realpath(os.fsdecode(path))
    except Exception:
        return True
    if p == "/dev/null":
        return False
    return not any(p == d or p.startswith(d + os.sep) for d in S.writable)


def _emit(event):
    """Record an audit finding and stream it to the zygote at once: the candidate is
    about to get what it asked for, and may forge a verdict with it."""
    S.events.append(event)
    if S.taint is not None:
        try:
            S.taint(*event)
        except Exception:
            pass


def _audit(event, args):
    if not S.active:
        return
    e = event
    if not (e in _INTROSPECTION or e in _ESCAPE or e in _PATH_EVENTS or e in _EXIT
            or e == "open" or e == "sys._getframe" or e.startswith("os.exec")):
        return
    me = threading.get_ident()
    if me in S.busy:
        return
    S.busy.add(me)
    try:
        caller = sys._getframe(1)
        if e == "sys._getframe":
            k = _kind(caller.f_code.co_filename)
            mod = os.path.basename(caller.f_code.co_filename)
            if k == "untrusted" or (mod in ("inspect.py", "traceback.py") and _innermost_untrusted(caller)):
                _emit(("introspection", "sys._getframe"))
            return
        if not _innermost_untrusted(caller):
            return
        if e in _INTROSPECTION:
            _emit(("introspection", e))
        elif e in _ESCAPE or e.startswith("os.exec"):
            _emit(("escape", e))
        elif e in _EXIT:
            _emit(("exit", e))
        elif e in _PATH_EVENTS:
            if args and _outside_tmp(args[0]):
                _emit(("escape", f"{e} outside the temp dir"))
        elif e == "open":
            path, mode, flags = (tuple(args) + (None, None, None))[:3]
            writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or \
                      (mode is None and isinstance(flags, int) and flags & _WRITE_FLAGS)
            if writing and _outside_tmp(path):
                _emit(("escape", "open for writing outside the temp dir"))
    except Exception:
        pass
    finally:
        S.busy.discard(me)


_installed = False


def install():
    """Install the process-wide hooks once (idempotent; cannot be undone by design)."""
    global _installed
    if _installed:
        return
    _install_counters()
    _install_call_watches()
    sys.addaudithook(_audit)
    _installed = True


def _native_threads():
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return 0


class Guard:
    """One evaluation's view: snapshot before the candidate, checks after each call."""

    def __init__(self, cand_file, tmpdir, taint=None, writable=()):
        """writable: more directories the evaluation owns (the private /tmp and /dev/shm
        when the sandbox made them): writes there are not an escape."""
        install()
        S.cand_file, S.tmpdir = cand_file, os.path.realpath(tmpdir) if tmpdir else None
        S.writable = [d for d in [S.tmpdir] + [os.path.realpath(w) for w in writable] if d]
        S.taint = taint
        S.launches, S.launched_names, S.events, S.compile_calls = 0, set(), [], 0
        self.ids = snapshot.identities()
        self.flags = snapshot.flags()
        self.threads = {t.ident for t in threading.enumerate()}
        self.native = _native_threads()
        self.found = []          # (flag, detail), in order
        self.warnings = []

    def _add(self, flag, detail):
        if (flag, detail) not in self.found:
            self.found.append((flag, detail))

    class _Window:
        def __init__(self, guard, count, check):
            self.guard, self.count, self.check = guard, count, check

        def __enter__(self):
            S.active = True
            S.counting = self.count
            return self

        def __exit__(self, *exc):
            S.active = False
            S.counting = False
            if self.check:
                self.guard.check()
            return False

    def window(self, count=True, check=True):
        """Candidate code runs inside; count=True also counts its Triton launches.
        check=False leaves the (milliseconds of) re-checks for later: a timed call must
        cost the candidate's runner exactly what it costs the reference's, whose calls
        have no guard, or the judge's clock would see the difference."""
        return Guard._Window(self, count, check)

    def check(self):
        """Re-check everything the candidate could have tampered with; restore flags."""
        for flag, detail in S.events:
            self._add(flag, detail)
        S.events = []
        now = snapshot.identities()
        changed = []
        for k, v in self.ids.items():
            new = now.get(k, v)
            if new is not v:
                if snapshot.benign(k, new):
                    self.ids[k] = new
                else:
                    changed.append(k)
        changed.sort()
        if changed:
            self._add("patch", "replaced: " + ", ".join(changed[:5]))
        flags = snapshot.flags()
        if flags != self.flags:
            diff = sorted(k for k in flags if flags[k] != self.flags[k])
            self._add("patch", "global flags changed: " + ", ".join(diff))
            if any(k in snapshot.PRECISION_FLAGS for k in diff):
                self._add("precision", "TF32/reduced-precision flag changed")
            snapshot.restore_flags(self.flags)
        if torch._C._len_torch_function_stack() or torch._C._len_torch_dispatch_stack():
            self._add("patch", "a torch function/dispatch mode was left active")
        alive = [t for t in threading.enumerate() if t.ident not in self.threads and t.is_alive()]
        if alive:
            self._add("thread", f"thread {alive[0].name!r} still running after the call")
        native = _native_threads()
        if native > self.native:
            msg = f"native thread count grew from {self.native} to {native}"
            if msg not in self.warnings:
                self.warnings.append(msg)
            self.native = native

    @property
    def launches(self):
        return S.launches

    @property
    def launched_names(self):
        return set(S.launched_names)

    def used_compile(self):
        # Only the candidate's own torch.compile calls: torch imports Inductor lazily
        # for its own reasons, which says nothing about the candidate.
        return S.compile_calls > 0

    def flags_found(self):
        return [f for f, _ in self.found]
