"""Loading tasks and candidates as real modules from files in the private temp dir.

Triton's @jit and inspect need real source files, so nothing is exec'd from a string.
Every module gets a unique name so a candidate cannot shadow the task or vice versa.
"""

import ast
import importlib.util
import itertools
import math
import os
import re
import sys

_counter = itertools.count()


class TaskError(Exception):
    """The task (not the candidate) is broken; message is the one-line task_error."""


class SubmissionError(Exception):
    """The submission is not a candidate at all; status says which kind."""

    def __init__(self, status, feedback):
        super().__init__(feedback)
        self.status = status
        self.feedback = feedback


_CODE_LIKE = re.compile(r"^\s*(import\s|from\s+\S+\s+import|def\s|class\s|@\w)", re.M)


def defines_modelnew(tree):
    """A class or an assignment named ModelNew anywhere in the module."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == "ModelNew":
            return True
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            targets = [node.target]
        for t in targets:
            for n in ast.walk(t):
                if isinstance(n, ast.Name) and n.id == "ModelNew":
                    return True
    return False


def validate_submission(code, max_bytes=262144):
    """Parse the submission; raise SubmissionError, else return the AST."""
    if not isinstance(code, str):
        raise SubmissionError("invalid_submission", "submission is not text")
    if not code.strip():
        raise SubmissionError("invalid_submission", "empty submission: expected Python source defining class ModelNew")
    size = len(code.encode("utf-8", "surrogatepass"))
    if size > max_bytes:
        raise SubmissionError("invalid_submission", f"submission is {size} bytes, over the limit of {max_bytes}")
    try:
        code.encode("utf-8")
    except UnicodeEncodeError:
        raise SubmissionError("invalid_submission", "submission is not valid UTF-8 text")
    ctrl = sum(1 for c in code if ord(c) < 32 and c not in "\t\n\r\f\v")
    if "\x00" in code or ctrl > max(8, len(code) // 100):
        raise SubmissionError("invalid_submission", "submission looks like binary data, not Python source")
    try:
        tree = ast.parse(code, filename="candidate.py")
    except SyntaxError as e:
        if not _CODE_LIKE.search(code):
            raise SubmissionError("invalid_submission",
                                  "submission is not Python code (prose?): expected source defining class ModelNew")
        text = (e.text or "").rstrip()
        raise SubmissionError("compile_error", f'SyntaxError: {e.msg} (candidate.py, line {e.lineno})\n    {text}')
    except (ValueError, RecursionError, MemoryError) as e:
        raise SubmissionError("invalid_submission", f"submission cannot be parsed: {type(e).__name__}")
    if not defines_modelnew(tree):
        raise SubmissionError("invalid_submission", "no ModelNew defined: the submission must define class ModelNew(nn.Module)")
    return tree


def write_source(tmpdir, prefix, source):
    """Write source to a fresh file under tmpdir; returns (module_name, real path)."""
    n = next(_counter)
    name = f"_kg_{prefix}_{os.getpid()}_{n}"
    path = os.path.realpath(os.path.join(tmpdir, name + ".py"))
    with open(path, "w", encoding="utf-8") as f:
        f.write(source)
    return name, path


def import_file(name, path):
    """Execute path as module `name` (registered in sys.modules: dataclasses etc. need it)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def task_source(task):
    """The task's source: inline, else read from its path; TaskError when unreadable."""
    source = task.get("source")
    if not source and task.get("path"):
        label = task.get("path") or task.get("name") or "<task>"
        try:
            with open(task["path"], encoding="utf-8") as f:
                source = f.read()
        except OSError as e:
            raise TaskError(f"{label}: cannot read task file: {e.strerror}")
    return source


_TASK_NAMES = ("Model", "get_inputs", "get_init_inputs")


def _syntax(e):
    """A SyntaxError in one line; some (null bytes in the source) have no line."""
    return f"syntax error at line {e.lineno}: {e.msg}" if e.lineno else f"syntax error: {e.msg}"


def check_task_source(task):
    """What the judge can tell of a task without running it: readable, not empty, valid
    Python, and defining Model, get_inputs and get_init_inputs at module level (unless it
    star-imports or binds names dynamically: globals(), exec, setattr, vars, __dict__).
    TaskError otherwise.
    Checked before the candidate, so a broken reference is never the candidate's fault."""
    label = task.get("path") or task.get("name") or "<task>"
    source = task_source(task)
    if not source or not source.strip():
        raise TaskError(f"{label}: empty task source")
    try:
        tree = ast.parse(source)
    except SyntaxError as e:
        raise TaskError(f"{label}: the reference is not valid Python: {_syntax(e)}")
    except (ValueError, RecursionError, MemoryError) as e:
        raise TaskError(f"{label}: the reference cannot be parsed: {type(e).__name__}")
    # Names a module can bind without a statement the parse sees: then only running it can tell.
    names, dynamic = set(), any(tok in source for tok in ("globals(", "exec(", "setattr(", "__dict__", "vars("))
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for a in node.names:
                dynamic = dynamic or a.name == "*"
                names.add((a.asname or a.name).split(".")[0])
        else:   # assignments, and definitions under a module-level if/try/with
            for sub in ast.walk(node):
                if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                    names.add(sub.id)
                elif isinstance(sub, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                    names.add(sub.name)
                elif isinstance(sub, (ast.Import, ast.ImportFrom)):
                    names.update((a.asname or a.name).split(".")[0] for a in sub.names)
    missing = [n for n in _TASK_NAMES if n not in names]
    if missing and not dynamic:
        raise TaskError(f"{label}: the reference does not define {', '.join(missing)} "
                        f"(a task defines class Model, get_inputs() and get_init_inputs())")


# Module constants a task may set to replace its outputs' default tolerance (by dtype,
# kgharness.correctness) where its own reference is known to be less precise than that
# default assumes: torch's bf16 GroupNorm keeps each group's mean and rstd in bf16, and an
# exact kernel then sits up to 3-4 bf16 ULPs from it. Read from the source, never from the
# running module, so nothing that runs can move them.
TOLERANCE_NAMES = {"ATOL": "atol", "RTOL": "rtol"}
# rtol 1 would pass all-zeros against any output (|0 - r| <= rtol * |r|); half of it is
# already 64 bf16 ULPs.
RTOL_MAX = 0.5


def declared_tolerance(task):
    """The task's ATOL and RTOL: {"atol": x, "rtol": y} with the ones it sets, each a
    literal number assigned once at module level (atol finite and >= 0, rtol in
    [0, RTOL_MAX]). TaskError otherwise, so a typo cannot leave a task on the default."""
    label = task.get("path") or task.get("name") or "<task>"
    source = task_source(task)
    if not source or not any(name in source for name in TOLERANCE_NAMES):
        return {}
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}   # check_task_source says why
    found, bound = {}, {}
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store) and sub.id in TOLERANCE_NAMES:
                bound[sub.id] = bound.get(sub.id, 0) + 1
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            found.setdefault(node.targets[0].id, node.value)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            found.setdefault(node.target.id, node.value)
    out = {}
    for name, key in TOLERANCE_NAMES.items():
        if name not in bound:
            continue
        why = f"{label}: {name} must be assigned once, at module level, to a literal number"
        if bound[name] != 1 or name not in found:
            raise TaskError(why)
        try:
            x = ast.literal_eval(found[name])
        except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
            raise TaskError(why) from None
        if isinstance(x, bool) or not isinstance(x, (int, float)):
            raise TaskError(why)
        x = float(x)
        if key == "rtol" and not 0.0 <= x <= RTOL_MAX:
            raise TaskError(f"{label}: {name} = {x:g} is outside [0, {RTOL_MAX:g}]")
        if key == "atol" and not (math.isfinite(x) and x >= 0.0):
            raise TaskError(f"{label}: {name} = {x:g} is not a finite number >= 0")
        out[key] = x
    return out


def load_task(task, tmpdir):
    """Import the task's reference module; TaskError with a one-line reason on any defect."""
    label = task.get("path") or task.get("name") or "<task>"
    source = task_source(task)
    if not source:
        raise TaskError(f"{label}: empty task source")
    try:
        ast.parse(source)
    except SyntaxError as e:
        raise TaskError(f"{label}: {_syntax(e)}")
    name, path = write_source(tmpdir, "task", source)
    try:
        module = import_file(name, path)
    except BaseException as e:
        raise TaskError(f"{label}: importing the task raised {type(e).__name__}: {str(e)[:200]}")
    finally:
        sys.modules.pop(name, None)  # the candidate should not find the reference by name
    for attr in _TASK_NAMES:
        if not callable(getattr(module, attr, None)):
            raise TaskError(f"{label}: task does not define {attr}")
    return module


def load_candidate(code, tmpdir):
    """Write and import the candidate; exceptions propagate (the caller classifies them)."""
    name, path = write_source(tmpdir, "cand", code)
    return path, (lambda: import_file(name, path))
