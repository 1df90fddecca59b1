"""Triton launchers built once by the zygote and found by later runners (kgharness.runner.launchers).

A real kernel is compiled for sm_90 on this CPU by the precompile child, which names its
launcher signature; the zygote's builder builds that launcher from Triton's own source
into the trusted cache; a later runner seeded from it gets it from Triton's lookup with
its C compiler made to fail. Untrusted signatures that are not Triton's types are
refused, so no text of the candidate's reaches the C source."""
import os
import shutil
import time

import pytest

from kgharness.runner import launchers
from kgharness.sandbox import landlock
from test_precompile import run_child
from test_refshare import src

WALL = pytest.mark.skipif(landlock.landlock_abi() < 1, reason="the child compiles only behind its Landlock wall")
# The later runner: no C compiler it could use, and the stand-in libcuda bound lazily.
NO_COMPILER = 'os.environ["CC"] = "/bin/false"; sys.setdlopenflags(os.RTLD_LAZY)'


def test_parse_takes_tritons_types_and_refuses_anything_else():
    ok = ["*fp32", "*kbf16", "i32", "fp32", "constexpr", ["*fp16", "i64"], "u1"]
    assert launchers.parse(ok) == ["*fp32", "*kbf16", "i32", "fp32", "constexpr", ("*fp16", "i64"), "u1"]
    for bad in (
        "i32",                                      # not a list
        ["i32", 'fp32"); system("id'],              # C text
        ["*fp32;"], ["*" + "f" * 40], ["int"],      # not Triton's
        ["tensordesc<fp16[64, 64]>"],               # its launcher depends on more than types
        [[[["i32"]]]],                              # tuples three deep
        ["i32"] * (launchers.MAX_ARGS + 1),
        [["i32"] * 40, ["i32"] * 40],               # too many once flattened
        [None], [{"a": 1}], [[]],
    ):
        assert launchers.parse(bad) is None, bad
    # The source is Triton's: a pointer is a pointer whatever it points to.
    assert launchers.source(["*fp32", "i32"]) == launchers.source(["*bf16", "i32"])
    assert launchers.source(["*fp32", "i32"]) != launchers.source(["*fp32", "i64"])


def test_offer_is_bounded_per_evaluation_and_deduplicated(tmp_path):
    b = launchers.Builder(str(tmp_path / "trusted"), str(tmp_path / "staging"))
    many = [["*fp32"] * n for n in range(1, 20)]
    assert b.offer(many) == launchers.PER_EVALUATION
    assert b.offer(many) == 0                          # the same ones: already queued
    assert b.offer([["*bf16"]]) == 0                   # the same source as ["*fp32"]
    assert b.offer("not a list") == 0 and b.offer([["nope"], 7]) == 0
    assert b.refused == 2
    assert len(b.queue) == launchers.PER_EVALUATION


@WALL
def test_a_launcher_the_builder_made_is_the_one_a_later_runner_loads(tmp_path):
    code = src("cand_add_relu.py")
    first, _ = run_child(tmp_path, code, name="first", libcuda=True)
    assert first["kernels"] == 1 and len(first["signatures"]) == 1, first
    assert "launchers_found" not in first, first

    trusted, staging = tmp_path / "trusted", tmp_path / "staging"
    trusted.mkdir()
    b = launchers.Builder(str(trusted), str(staging))
    assert b.offer(first["signatures"]) == 1
    os.environ["TRITON_LIBCUDA_PATH"] = str(tmp_path / "first" / "lib")
    try:
        b.step()
        pid, status = os.waitpid(b.pid, 0)
    finally:
        del os.environ["TRITON_LIBCUDA_PATH"]
    assert b.reaped(pid, status) and b.built == 1, (status, b.failed)
    entries = os.listdir(trusted)
    assert len(entries) == 1 and os.listdir(trusted / entries[0]) == [launchers.NAME + launchers._suffix()]
    assert not os.listdir(staging)                     # renamed whole, nothing left behind

    # A later runner, its cache a copy of the trusted one, its C compiler /bin/false:
    # Triton's own CudaLauncher finds the launcher under its key and loads it.
    later, _ = run_child(tmp_path, code, setup=NO_COMPILER, name="later", seed=trusted, libcuda=True)
    assert later.get("launchers_found") == 1 and later["launchers"] == 0, later
    assert "stopped" not in later, later
    # Without the seed the same runner has to build it, and cannot.
    alone, _ = run_child(tmp_path, code, setup=NO_COMPILER, name="alone", libcuda=True)
    assert "launchers_found" not in alone and "launcher" in alone.get("stopped", ""), alone


def test_the_builder_is_stopped_while_a_window_is_open(tmp_path):
    b = launchers.Builder(str(tmp_path / "trusted"), str(tmp_path / "staging"))
    b.offer([["*fp32", "i32", "constexpr"]])
    b.hold(True)
    b.step()
    assert b.pid is None and b.queue, "no builder starts during a window"
    b.hold(False)
    b.step()
    pid = b.pid
    assert pid is not None and not b.queue
    b.hold(True)
    state = ""
    for _ in range(100):
        state = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0]
        if state == "T":
            break
        time.sleep(0.01)
    assert state == "T"
    b.shutdown()
    assert b.pid is None and not os.path.exists(f"/proc/{pid}")


@pytest.fixture(autouse=True)
def _no_leftovers(tmp_path):
    yield
    shutil.rmtree(tmp_path, ignore_errors=True)
