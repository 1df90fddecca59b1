"""The kgharness package's shape: its import graph has no cycle, each room imports only
rooms below it, no module is over 450 lines and no class over 300, and every subpackage
says what it holds and who may import it. Read from the source with ast: nothing here
imports the harness."""

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[1] / "kgharness"
# The rooms, lowest first: a module may import its own room and the rooms before it. The
# top level ("") holds the shared modules every process of an evaluation loads.
ROOMS = ("", "sandbox", "runner", "judge", "zygote")
MAX_MODULE_LINES = 450
MAX_CLASS_LINES = 300


def modules(root=PKG):
    """{dotted name: path} for every module of the package."""
    out = {}
    for f in sorted(root.rglob("*.py")):
        parts = list(f.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(["kgharness", *parts])] = f
    return out


def imports(name, path, known):
    """The package's modules that `name` imports, at any depth of its code (a function's
    lazy import counts as much as one at the top)."""
    tree = ast.parse(path.read_text())
    base = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                mod = ".".join(base[:len(base) - node.level + 1] + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            if mod.split(".")[0] != "kgharness":
                continue
            for alias in node.names:
                sub = f"{mod}.{alias.name}"
                out.add(sub if sub in known else mod)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.split(".")[0] == "kgharness")
    out.discard(name)
    return out


def graph(root=PKG):
    mods = modules(root)
    return {name: imports(name, path, mods) for name, path in mods.items()}, mods


def cycle(g):
    """One import cycle of g as a list of modules, or None."""
    state, stack = {}, []

    def visit(n):
        state[n] = "open"
        stack.append(n)
        for m in sorted(g.get(n, ())):
            if state.get(m) == "open":
                return stack[stack.index(m):] + [m]
            if m not in state:
                found = visit(m)
                if found:
                    return found
        stack.pop()
        state[n] = "done"
        return None

    for n in sorted(g):
        if n not in state:
            found = visit(n)
            if found:
                return found
    return None


def room(name):
    parts = name.split(".")
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and parts[1] in ROOMS) else ""


def test_the_import_graph_has_no_cycle():
    g, _ = graph()
    assert len(g) > 40, sorted(g)
    assert cycle(g) is None, " -> ".join(cycle(g))


def test_the_cycle_finder_finds_one():
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


def test_imports_from_a_file_see_lazy_and_relative_ones(tmp_path):
    pkg = tmp_path / "kgharness"
    (pkg / "judge").mkdir(parents=True)
    for f in ("__init__.py", "channel.py", "judge/__init__.py", "judge/flow.py"):
        (pkg / f).write_text("")
    (pkg / "judge" / "trials.py").write_text("from .. import channel\n\ndef f():\n    from . import flow\n")
    g, _ = graph(pkg)
    assert g["kgharness.judge.trials"] == {"kgharness.channel", "kgharness.judge.flow"}


def test_each_room_imports_only_its_own_and_the_rooms_below():
    g, _ = graph()
    rank = {r: i for i, r in enumerate(ROOMS)}
    upward = sorted(f"{a} imports {b}" for a, deps in g.items() for b in deps
                    if rank[room(b)] > rank[room(a)])
    assert not upward, upward


@pytest.mark.parametrize("sub", ROOMS[1:])
def test_every_room_is_a_subpackage_that_says_who_may_import_it(sub):
    init = PKG / sub / "__init__.py"
    doc = ast.get_docstring(ast.parse(init.read_text())) or ""
    assert "Imported by" in doc or "imports this package" in doc, doc
    assert len(list((PKG / sub).glob("*.py"))) >= 3


def test_no_module_over_450_lines_and_no_class_over_300():
    _, mods = graph()
    long_modules, long_classes = [], []
    for name, path in mods.items():
        text = path.read_text()
        if text.count("\n") > MAX_MODULE_LINES:
            long_modules.append(f"{name}: {text.count(chr(10))}")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ClassDef) and node.end_lineno - node.lineno + 1 > MAX_CLASS_LINES:
                long_classes.append(f"{name}.{node.name}: {node.end_lineno - node.lineno + 1}")
    assert not long_modules, long_modules
    assert not long_classes, long_classes


def test_the_harness_paths_name_the_package_root():
    """Landlock's read grant and the links resolved under the private /tmp name the whole
    package: a judge or runner that imports a module of another subpackage lazily (the
    judge's bufferops, once sealed) must be able to read it."""
    from kgharness.sandbox import readpaths
    got = {p for p, why, _ in readpaths._read_candidates() if why == "the harness package"}
    assert got == {str(PKG.resolve())}, got
    src = (PKG / "sandbox" / "mounts.py").read_text()
    assert "os.path.dirname(os.path.dirname(os.path.abspath(__file__)))" in src
