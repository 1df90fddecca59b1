"""Static (AST) screen of candidate source: warnings only, never a status.

A static rule is easy to dodge and easy to misfire on honest code (HACKS.md), so this
only tells the reader (and the LLM) what to look at; the runtime checks decide.
"""

import ast

_MODULE_WARN = {
    "gc": "imports gc (object-graph introspection)",
    "inspect": "imports inspect (frame introspection)",
    "ctypes": "imports ctypes (raw memory / native calls)",
    "threading": "imports threading (work after forward returns?)",
    "multiprocessing": "imports multiprocessing",
    "subprocess": "imports subprocess",
    "socket": "imports socket",
    "concurrent": "imports concurrent.futures (background work?)",
    "torch._inductor": "imports torch._inductor (generated kernels do not count as the candidate's)",
    "torch._dynamo": "imports torch._dynamo",
}
_ATTR_WARN = {
    "_getframe": "uses sys._getframe (frame introspection)",
    "f_back": "reads frame.f_back (caller frames)",
    "f_locals": "reads frame.f_locals",
    "f_globals": "reads frame.f_globals",
    "_current_frames": "uses sys._current_frames",
    "get_objects": "uses gc.get_objects",
    "get_referrers": "uses gc.get_referrers",
    "system": "calls os.system",
    "Stream": "creates a CUDA stream (must be joined before returning)",
    "ExternalStream": "uses an external CUDA stream",
    "stream": "switches CUDA streams (must be joined before returning)",
    "compile": "uses torch.compile (generated kernels do not count as the candidate's)",
    "allow_tf32": "touches TF32 flags",
    "set_float32_matmul_precision": "changes float32 matmul precision",
    "data_ptr": "uses data_ptr (caching by pointer?)",
    "_exit": "calls os._exit",
    "exit": "calls exit",
}
_PATCH_TARGETS = ("torch", "time", "triton", "builtins", "sys")


def _dotted(node):
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""


def _dot_without_precision(call, fp32_hint):
    if _dotted(call.func).split(".")[-1] != "dot" or not _dotted(call.func).startswith(("tl.", "triton.language.")):
        return False
    kws = {k.arg for k in call.keywords}
    return fp32_hint and "input_precision" not in kws and "allow_tf32" not in kws


def screen(code, fp32=True):
    """Short warning strings for suspicious constructs in the candidate's source."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    out = []

    def warn(msg):
        if msg not in out and len(out) < 20:
            out.append(msg)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                for mod, msg in _MODULE_WARN.items():
                    if a.name == mod or a.name.startswith(mod + "."):
                        warn(msg)
        elif isinstance(node, ast.ImportFrom) and node.module:
            for mod, msg in _MODULE_WARN.items():
                if node.module == mod or node.module.startswith(mod + "."):
                    warn(msg)
            if node.module in ("sys", "os", "gc", "inspect"):
                for a in node.names:
                    if a.name in _ATTR_WARN:
                        warn(_ATTR_WARN[a.name])
        elif isinstance(node, ast.Attribute):
            full = _dotted(node)
            if node.attr in ("system", "exit", "_exit") and not full.startswith(("os.", "sys.")):
                continue
            if node.attr in ("compile",) and not full.startswith("torch."):
                continue
            if node.attr in ("stream", "Stream", "ExternalStream") and "cuda" not in full:
                continue
            if node.attr in _ATTR_WARN:
                warn(_ATTR_WARN[node.attr])
            if full.startswith("torch.backends."):
                warn(f"touches global flag {full}")
        elif isinstance(node, ast.Call):
            name = _dotted(node.func)
            if name == "setattr" and node.args:
                target = _dotted(node.args[0]).split(".")[0]
                if target in _PATCH_TARGETS:
                    warn(f"setattr on module {target} (monkey-patching?)")
            if name in ("exec", "eval"):
                warn(f"calls {name}()")
            if _dot_without_precision(node, fp32):
                warn("tl.dot without input_precision: on fp32 inputs Triton may use TF32 "
                     "(pass input_precision=\"ieee\" for full fp32)")
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                full = _dotted(t)
                if full.split(".")[0] in _PATCH_TARGETS and "." in full:
                    warn(f"assigns {full} (monkey-patching?)")
        elif isinstance(node, ast.Subscript):
            sl = node.slice
            if isinstance(sl, ast.Call) and _dotted(sl.func).endswith("data_ptr"):
                warn("dict keyed by data_ptr (output caching?)")
    return out


def defines_triton_kernel(code):
    """The source defines a function decorated with triton.jit / triton.autotune / jit."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for d in node.decorator_list:
                name = _dotted(d.func if isinstance(d, ast.Call) else d)
                if name.split(".")[-1] in ("jit", "autotune", "heuristics"):
                    return True
    return False
