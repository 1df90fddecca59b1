"""What task and candidate code find in their environment and in /proc.

Go starts the zygote with an allowlisted environment (harness/zygoteenv.go, copied in
harness/testdata/env/allowlist.json). Here the zygote is started the same way, from an
environment full of secrets, with one more secret in a harness setting the zygote keeps
(KERNELGATE_DATA_DIR) and one on a bystander's command line; candidate and reference
code hunt for them and raise with what they found.
"""

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from zygote_client import ZygoteClient

REPO = Path(__file__).resolve().parents[3]
PKG = REPO / "harness" / "py" / "kgharness"
ALLOW = json.loads((REPO / "harness" / "testdata" / "env" / "allowlist.json").read_text())
TASK = (REPO / "datasets" / "ci" / "1_add_relu.py").read_text()
HONEST = (REPO / "harness" / "testdata" / "hacks" / "control_honest.py").read_text()
CANARY = f"kgcanary-{os.getpid()}-{time.monotonic_ns()}"
# Set by the zygote for the processes it forks, not taken from Go's environment.
SET_BY_THE_ZYGOTE = {"KERNELGATE_TRUSTED_TRITON_CACHE"}
# What a runner sets for itself (kgharness.runner.spawn.private_env), and torch for itself (its
# Inductor cache, under the private /tmp).
SET_BY_THE_RUNNER = {"HOME", "TMPDIR", "TRITON_CACHE_DIR", "TRITON_HOME", "TORCHINDUCTOR_CACHE_DIR"}


def test_every_harness_variable_the_python_side_reads_is_on_the_allowlist():
    """A KERNELGATE_* setting read here but missing from Go's allowlist would silently never
    arrive: Go drops every name it does not list."""
    named = set()
    for f in PKG.rglob("*.py"):
        named |= set(re.findall(r'"(KERNELGATE_[A-Z][A-Z_]*)"', f.read_text()))
    assert named, "no KERNELGATE_ variable found: the pattern is wrong"
    missing = named - set(ALLOW["allowlist"]) - set(ALLOW["set"]) - SET_BY_THE_ZYGOTE
    assert not missing, f"read by kgharness, not passed by harness/zygoteenv.go: {sorted(missing)}"


def go_env(extra):
    """The zygote's environment as harness/zygoteenv.go builds it from `extra` on top of
    this process's."""
    parent = {**os.environ, **extra}
    env = {k: v for k, v in parent.items() if k in ALLOW["allowlist"]}
    env.update(TRITON_INTERPRET="1", CUDA_VISIBLE_DEVICES="", PYTHONUNBUFFERED="1",
               KERNELGATE_DATA_DIR=f"/nonexistent/{CANARY}/data")
    return env


HUNT = '''
def kg_hunt():
    import json, os, re
    found = [k + "=" + v for k, v in os.environ.items() if re.search("(?i)canary", k + v)]
    pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
    for pid in pids:
        for name in ("cmdline", "environ"):
            try:
                with open("/proc/%d/%s" % (pid, name), "rb") as f:
                    found += re.findall("[^\\\\x00]*canary[^\\\\x00]*", f.read().decode("latin-1"))
            except OSError:
                pass
    return "HUNT " + json.dumps({"found": sorted(set(found)), "names": sorted(os.environ), "pids": pids,
                                 "self": os.getpid(), "home": os.environ.get("HOME"),
                                 "tmpdir": os.environ.get("TMPDIR")})
'''


@pytest.fixture(scope="module")
def hunted(tmp_path_factory):
    """The zygote under Go's environment, a bystander with a secret on its command line,
    and the verdicts of an honest kernel, a hunting candidate and a hunting reference."""
    secrets = {"KG_CANARY_SECRET": CANARY, "OPENAI_API_KEY": CANARY, "KERNELGATE_SESSION_TOKEN": CANARY,
               "KERNELGATE_PRECOMPILE": "auto"}
    tmp = tmp_path_factory.mktemp("hunt")
    task, hunt_task = tmp / "task.py", tmp / "hunt_task.py"
    task.write_text(TASK)
    hunt_task.write_text(TASK.replace("return torch.relu(x + y)", "raise RuntimeError(kg_hunt())") + HUNT)
    candidate = HONEST.replace("x, y = x.contiguous(), y.contiguous()", "raise RuntimeError(kg_hunt())", 1) + HUNT
    assert "raise RuntimeError(kg_hunt())" in candidate
    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)", CANARY])
    deadline = time.monotonic() + 30
    while CANARY.encode() not in open(f"/proc/{bystander.pid}/cmdline", "rb").read():   # exec'd yet?
        assert time.monotonic() < deadline and bystander.poll() is None, "the bystander never started"
        time.sleep(0.01)
    try:
        with ZygoteClient(base_env=go_env(secrets)) as z:
            yield {"zygote": z.proc.pid, "bystander": bystander.pid,
                   "honest": z.evaluate(str(task), HONEST, {"seeds": 2}),
                   "candidate": z.evaluate(str(task), candidate, {"seeds": 1}),
                   "reference": z.evaluate(str(hunt_task), HONEST, {"seeds": 1})}
    finally:
        bystander.kill()
        bystander.wait()


def report(v):
    text = v["feedback"] + v.get("task_error", "")
    i = text.find("HUNT {")
    assert i >= 0, (v["status"], text[:500])
    return json.loads(text[i + 5:text.index("}", i) + 1])


def test_an_honest_kernel_runs_with_the_allowlisted_environment_alone(hunted):
    v = hunted["honest"]
    assert v["status"] == "correct" and v["env"]["sandbox"] == "full", (v["status"], v["feedback"][:300], v["env"])


@pytest.mark.parametrize("side", ["candidate", "reference"])
def test_no_secret_reaches_task_or_candidate_code(hunted, side):
    v = hunted[side]
    assert CANARY not in json.dumps(v), v
    assert v["status"] == ("runtime_error" if side == "candidate" else "harness_error"), v["status"]
    if side == "candidate":      # the reference's task error holds 200 characters of it
        got = report(v)
        assert got["found"] == [], got
        assert not [n for n in got["names"] if n.startswith("KERNELGATE_")], got["names"]
        assert set(got["names"]) <= set(ALLOW["allowlist"]) | set(ALLOW["set"]) | SET_BY_THE_RUNNER, got["names"]
        assert got["home"] == got["tmpdir"] and got["home"].endswith("/candidate"), got
        # /proc lists the runner alone: not the zygote, the judge, the reference or the bystander.
        assert got["pids"] == [got["self"]], got
        assert hunted["zygote"] not in got["pids"] and hunted["bystander"] not in got["pids"]
    else:
        assert "HUNT {" in v["task_error"], v["task_error"]


DROP = """
import ctypes, json, os
from kgharness.sandbox import readpaths, runenv
dropped = runenv.drop_harness()
libc = ctypes.CDLL(None)
libc.getenv.restype = ctypes.c_char_p
with open("/proc/self/environ", "rb") as f:
    block = f.read().decode("latin-1")
print(json.dumps({"dropped": dropped, "left": [k for k in os.environ if k.startswith("KERNELGATE_")],
                  "block": block, "path": (libc.getenv(b"PATH") or b"").decode(),
                  "sealed": readpaths.forbidden_dirs()}))
"""


def test_a_runner_drops_the_harness_settings_and_its_exec_time_block():
    """As a runner does once its walls are up, in a process exec'd with harness settings:
    no KERNELGATE_* left in its environment nor in the block /proc/self/environ shows (its
    exec-time one), and what was kept is where it was, for C's getenv too."""
    env = {"PATH": os.environ["PATH"], "PYTHONPATH": str(PKG.parent),
           "KERNELGATE_DATA_DIR": "/data-" + CANARY, "KERNELGATE_PRECOMPILE": "on"}
    p = subprocess.run([sys.executable, "-c", DROP], env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    got = json.loads(p.stdout)
    assert got["dropped"] == ["KERNELGATE_DATA_DIR", "KERNELGATE_PRECOMPILE"] and got["left"] == [], got
    assert CANARY not in got["block"] and "KERNELGATE_" not in got["block"], got
    assert "PATH=" + os.environ["PATH"] in got["block"] and got["path"] == os.environ["PATH"], got
    assert got["sealed"] == ["/data-" + CANARY], got     # what it forks still builds its rules from it
