#!/usr/bin/env python3
"""Does a kernelgate binary run this working tree's harness? `kernelgate version` names the
hash of the kgharness package it embeds (harness/pyfiles.go: names and contents, sorted);
this computes the same from harness/py/kgharness and compares. A device run that carries a
binary built before a harness change measures the old harness (it happened: README,
Measurements, 2026-12-02 third session). Exit 0: the same; 1: not; 2: could not tell."""

import argparse
import hashlib
import pathlib
import re
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parents[2]


def tree_sum(root=REPO):
    """The first 16 hex digits of harness.pyFiles' hash, from the files on disk: the package's
    .py files and its subpackages' (the embed patterns py/kgharness/*.py and */*.py), sorted
    by their path under harness/."""
    pkg = root / "harness" / "py" / "kgharness"
    files = {f"py/kgharness/{f.relative_to(pkg).as_posix()}": f for f in [*pkg.glob("*.py"), *pkg.glob("*/*.py")]}
    h = hashlib.sha256()
    for name in sorted(files):
        data = files[name].read_bytes()
        h.update(f"{name}\0{len(data)}\0".encode())
        h.update(data)
    return h.hexdigest()[:16]


def binary_sum(binary):
    out = subprocess.run([str(binary), "version"], capture_output=True, text=True, timeout=60)
    m = re.search(r"\bharness ([0-9a-f]{16})\b", out.stdout)
    return m.group(1) if m else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("binary", nargs="?", default=str(REPO / "bin" / "kernelgate"))
    a = ap.parse_args()
    try:
        got = binary_sum(a.binary)
    except (OSError, subprocess.SubprocessError) as e:
        print(f"check_binary: cannot run {a.binary}: {e}", file=sys.stderr)
        return 2
    want = tree_sum()
    if got is None:
        print(f"check_binary: {a.binary} does not name its embedded harness (built before 2026-12-02?)",
              file=sys.stderr)
        return 2
    if got != want:
        print(f"check_binary: {a.binary} embeds harness {got}, the working tree has {want}: rebuild it",
              file=sys.stderr)
        return 1
    print(f"check_binary: {a.binary} embeds this working tree's harness ({want})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
