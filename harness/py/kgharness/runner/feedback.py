"""Turning candidate failures into text an LLM can act on, and into stable signatures.

clean_traceback keeps only the candidate's own frames (its file, its line numbers):
harness and torch frames are noise to the model and leak harness internals.
error_signature strips everything run-specific so that the same mistake made twice
(other names, other shapes, other temp paths) groups under one key for skill mining.
classify maps an exception to a verdict status (docs/protocol.md, "status").
"""

import errno
import linecache
import re
import traceback

_MAX_MSG = 1500


def _compilation_error_types():
    try:
        from triton.compiler.errors import CompilationError
        return (CompilationError,)
    except Exception:  # triton missing or moved: fall back to names
        return ()


def _chain(exc):
    """exc, its __cause__/__context__ chain (cycle-safe, bounded)."""
    seen, out = set(), []
    while exc is not None and id(exc) not in seen and len(out) < 8:
        seen.add(id(exc))
        out.append(exc)
        exc = exc.__cause__ or exc.__context__
    return out


def is_compile_error(exc):
    """A Triton compile error, also when it surfaced at first launch inside forward()."""
    types = _compilation_error_types()
    for e in _chain(exc):
        if types and isinstance(e, types):
            return True
        if any(c.__name__ == "CompilationError" for c in type(e).__mro__):
            return True
    return False


# How the GPU says it is full, beyond torch's OutOfMemoryError from its caching
# allocator: the CUDA runtime's error (torch raises AcceleratorError for it, e.g. a
# library's own workspace), cuBLAS's and cuDNN's, and the driver's (error 2, as
# kgharness.exchange reports a cuMemAlloc that failed), and the runtime's "busy or
# unavailable", which a process meets when it cannot make its context on a GPU other
# processes have filled. A reference that meets one of them on a shared GPU is not a
# broken task: the evaluation is retried.
_DEVICE_OOM = re.compile(r"CUDA out of memory|CUDA error: out of memory|CUBLAS_STATUS_ALLOC_FAILED|"
                         r"CUDNN_STATUS_ALLOC_FAILED|cudaErrorMemoryAllocation|CUDA_ERROR_OUT_OF_MEMORY|"
                         r"CUDA driver error 2\b|device\(s\) is/are busy or unavailable|"
                         r"cudaErrorDevicesUnavailable")


def is_device_oom(exc):
    """An out-of-memory error of the GPU (not of the host), anywhere in the chain."""
    for e in _chain(exc):
        if type(e).__name__ == "OutOfMemoryError" or _DEVICE_OOM.search(_message(e)[:300]):
            return True
    return False


_TRIED = re.compile(r"Tried to allocate ([0-9.]+) (B|KiB|MiB|GiB|TiB)")
_UNIT = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}


def oom_request_bytes(exc):
    """The size of the allocation that failed, from torch's message; 0 when unknown."""
    for e in _chain(exc):
        m = _TRIED.search(_message(e)[:500])
        if m:
            return int(float(m.group(1)) * _UNIT[m.group(2)])
    return 0


def classify(exc, during_import=False):
    """Status for an exception raised by candidate code: (status, flag or None)."""
    if isinstance(exc, SystemExit):
        return "runtime_error", "exit"
    if isinstance(exc, MemoryError):
        return "resource_limit", None
    if type(exc).__name__ == "OutOfMemoryError":  # torch.cuda.OutOfMemoryError
        return "resource_limit", None
    if isinstance(exc, OSError) and exc.errno == errno.EFBIG:
        return "resource_limit", None
    if during_import or is_compile_error(exc):
        return "compile_error", None
    return "runtime_error", None


def _message(exc):
    try:
        msg = str(exc)
    except BaseException:  # a hostile __str__ must not break the harness
        msg = "<unprintable message>"
    if len(msg) > _MAX_MSG:
        msg = msg[:_MAX_MSG] + " ..."
    return msg


def clean_traceback(exc, candidate_file):
    """Short text: the candidate's own frames (file renamed to 'candidate.py'), then Type: message."""
    lines = []
    for e in reversed(_chain(exc)):
        frames = []
        try:
            for fs in traceback.extract_tb(e.__traceback__):
                if candidate_file and fs.filename == candidate_file:
                    src = fs.line or linecache.getline(fs.filename, fs.lineno).strip()
                    frames.append(f'  File "candidate.py", line {fs.lineno}, in {fs.name}\n    {src}')
        except BaseException:
            pass
        if isinstance(e, SyntaxError) and e.filename == candidate_file and e.lineno:
            frames.append(f'  File "candidate.py", line {e.lineno}\n    {(e.text or "").strip()}')
        if frames:
            lines.append("Traceback (candidate frames only):")
            lines.extend(frames[-6:])
        msg = _message(e)
        if candidate_file:
            msg = msg.replace(candidate_file, "candidate.py")
        lines.append(f"{type(e).__name__}: {msg}".rstrip())
    return "\n".join(lines)


def _signature_message(exc):
    """The one line that identifies the error (for CompilationError: location + reason)."""
    if is_compile_error(exc):
        for e in _chain(exc):
            node = getattr(e, "node", None)
            reason = (getattr(e, "error_message", None) or "").strip()
            if node is None and not reason:
                continue
            loc = f"at {getattr(node, 'lineno', 0)}:{getattr(node, 'col_offset', 0)}:" if node is not None else ""
            first = reason.splitlines()[0] if reason else ""
            return type(e).__name__, f"{loc} {first}".strip()
    msg = _message(exc).strip()
    first = next((ln.strip() for ln in msg.splitlines() if ln.strip()), "")
    return type(exc).__name__, first


_SUBS = [
    (re.compile(r"(?:[A-Za-z]:)?(?:/[\w.\-<>]+)+/?"), "<path>"),
    (re.compile(r"0x[0-9a-fA-F]+"), "<hex>"),
    (re.compile(r"torch\.Size\(\[[^\]]*\]\)"), "<shape>"),
    (re.compile(r"[\[(]\s*-?\d+(?:\s*,\s*-?\d+)*\s*,?\s*[\])]"), "<shape>"),
    (re.compile(r"'[^'\n]*'|\"[^\"\n]*\"|`[^`\n]*`"), "<name>"),
    (re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?(?![\w.])"), "<n>"),
    (re.compile(r"\s+"), " "),
]


def error_signature(exc):
    """'ErrorClass: message' with paths, hex, shapes, quoted names and numbers stripped."""
    try:
        name, msg = _signature_message(exc)
        for rx, rep in _SUBS:
            msg = rx.sub(rep, msg)
        return f"{name}: {msg.strip()}"[:300]
    except BaseException:
        return type(exc).__name__
