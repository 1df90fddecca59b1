"""scripts/measure/check_binary.py agrees with the binary on the hash of the embedded harness, and a
changed harness file is told apart: a device run must not measure an older build's harness."""
import importlib.util
import shutil
import subprocess
import sys

from conftest import BIN, REPO


def _module():
    spec = importlib.util.spec_from_file_location("check_binary", REPO / "scripts" / "measure" / "check_binary.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_built_binary_embeds_this_tree_and_a_changed_file_is_seen(tmp_path):
    p = subprocess.run([sys.executable, str(REPO / "scripts" / "measure" / "check_binary.py"), str(BIN)],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    cb = _module()
    assert cb.binary_sum(BIN) == cb.tree_sum()
    copy = tmp_path / "harness" / "py" / "kgharness"
    shutil.copytree(REPO / "harness" / "py" / "kgharness", copy, ignore=shutil.ignore_patterns("__pycache__"))
    assert cb.tree_sum(tmp_path) == cb.tree_sum()
    with open(copy / "verdict.py", "a") as f:
        f.write("# one more line\n")
    assert cb.tree_sum(tmp_path) != cb.tree_sum()
    p = subprocess.run([sys.executable, str(REPO / "scripts" / "measure" / "check_binary.py"), sys.executable],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and "does not name" in p.stderr, (p.returncode, p.stderr)
