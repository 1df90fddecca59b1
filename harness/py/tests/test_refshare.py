"""Shared reference work (kgharness.judge.refstore): later evaluations of a task use
the reference outputs, screens and "before" timing the first one published, with the
same verdicts as when every evaluation does its own; a changed task or option is never
answered from another's work; the store evicts beyond its budget.

Real zygotes on the CPU (the interpreter), one with sharing on and one with it off."""
import os

import pytest
import torch

from kgharness.judge import refstore
from zygote_client import ZygoteClient

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "eval_fixtures")


def src(name):
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as f:
        return f.read()


ADD = {"name": "task_add_relu", "path": "", "source": src("task_add_relu.py")}
SOFTMAX = {"name": "task_softmax", "path": "", "source": src("task_softmax.py")}
WRONG = src("cand_add_relu.py") + "\n_f = ModelNew.forward\nModelNew.forward = lambda s, *a: _f(s, *a) * 1.5\n"
OPTS = {"seeds": 3, "cpu_timing": True, "timing_budget_ms": 5, "min_iters": 3}
# What sharing must not change (speedups are timings: not compared).
SAME = ("status", "correct", "compiled", "hack_flags", "trials_passed", "trials_total", "max_abs_error",
        "max_rel_error", "tolerance", "task_error")


@pytest.fixture(scope="module")
def on():
    with ZygoteClient(mode="cpu_interpreter") as c:
        yield c
        assert c.alive(), c.log_text()


@pytest.fixture(scope="module")
def off():
    with ZygoteClient(mode="cpu_interpreter", extra_args=["--share-reference-mb", "0"]) as c:
        yield c


def test_verdicts_are_the_same_with_sharing_on_and_off(on, off):
    runs = [(ADD, src("cand_add_relu.py")), (ADD, WRONG), (ADD, src("cand_add_relu.py")),
            (SOFTMAX, src("cand_softmax.py")), (SOFTMAX, src("cand_softmax_hardcoded.py")),
            (SOFTMAX, src("cand_softmax.py"))]
    shared, statuses = [], []
    for task, code in runs:
        a, b = on.evaluate(task, code, OPTS), off.evaluate(task, code, OPTS)
        assert {k: a[k] for k in SAME} == {k: b[k] for k in SAME}, (task["name"], a["feedback"], b["feedback"])
        assert b["reference_shared"] is False
        shared.append(a["reference_shared"])
        statuses.append(a["status"])
    # The first evaluation of each task publishes; every later one uses its work,
    # whatever the earlier candidates did (a wrong one still completes the reference's).
    assert shared == [False, True, True, False, True, True]
    assert statuses == ["correct", "incorrect", "correct", "correct", "reward_hack", "correct"]


def test_a_shared_evaluation_does_no_reference_work_and_reuses_the_before_timing(on):
    # Many seeds, so that the reference work the later evaluation skips outweighs the noise
    # in what both do alike (import, load: ~40 ms of CPU here; with 3 seeds the two came
    # within 0.2 ms of each other and the order flipped under CI's load).
    opts = dict(OPTS, seed=7, seeds=24)
    first = on.evaluate(ADD, src("cand_add_relu.py"), opts)
    later = on.evaluate(ADD, src("cand_add_relu.py"), opts)
    assert first["status"] == later["status"] == "correct"
    assert not first["reference_shared"] and later["reference_shared"]
    assert "window_before_shared" not in first["stage_ms"]
    assert later["stage_ms"]["window_before_shared"] == 1.0
    assert later["ref_runtime_before"] == first["ref_runtime_before"]      # the published figure
    assert later["ref_runtime_after"]["iterations"] >= OPTS["min_iters"]   # timed in its own window
    # The shared evaluation's reference runner only loaded and was timed: less CPU.
    assert later["stage_ms"]["cpu_reference"] < first["stage_ms"]["cpu_reference"], \
        (later["stage_ms"]["cpu_reference"], first["stage_ms"]["cpu_reference"])


def test_a_shared_reference_is_called_only_once_its_candidate_passed(on):
    # Its reference only runs in the window (kgharness.zygote.admission, "the reference later"):
    # a wrong candidate never has it called, a correct one has it warmed before the window.
    opts = dict(OPTS, seed=13)
    first = on.evaluate(ADD, src("cand_add_relu.py"), opts)
    assert not first["reference_shared"]
    assert first["stage_ms"]["reference_warm"] > 0      # its own reference warmed up at load
    good, bad = on.evaluate(ADD, src("cand_add_relu.py"), opts), on.evaluate(ADD, WRONG, opts)
    # Owing its memory, neither reference made a call at load (it would hold a set of
    # inputs outside every reservation).
    assert "reference_warm" not in good["stage_ms"] and "reference_warm" not in bad["stage_ms"]
    assert good["reference_shared"] and bad["reference_shared"]
    assert good["status"] == "correct" and bad["status"] == "incorrect", (good["feedback"], bad["feedback"])
    assert "reference_later" in good["stage_ms"] and "reference_later_wait" in good["stage_ms"]
    assert "reference_later" not in bad["stage_ms"]
    assert good["ref_runtime_after"]["iterations"] >= OPTS["min_iters"]


def test_another_source_or_option_is_not_answered_from_shared_work(on):
    opts = dict(OPTS, seed=11, cpu_timing=False)
    assert not on.evaluate(ADD, src("cand_add_relu.py"), opts)["reference_shared"]
    assert on.evaluate(ADD, src("cand_add_relu.py"), opts)["reference_shared"]
    changed = dict(ADD, source=ADD["source"].replace("torch.relu(x + y)", "torch.relu(x + y) * 2"))
    v = on.evaluate(changed, src("cand_add_relu.py"), opts)
    assert not v["reference_shared"] and v["status"] == "incorrect"    # against its own reference
    for other in ({"seeds": 2}, {"atol": 1e-3}, {"rtol": 1e-3}, {"seed": 12}):
        v = on.evaluate(ADD, src("cand_add_relu.py"), dict(opts, **other))
        assert not v["reference_shared"], other


def test_a_failed_task_publishes_nothing(on):
    bad = dict(ADD, source=ADD["source"].replace("return torch.relu(x + y)", "return torch.zeros_like(x)"))
    for _ in range(2):
        v = on.evaluate(bad, src("cand_add_relu.py"), dict(OPTS, cpu_timing=False))
        assert v["status"] == "harness_error" and "degenerate" in v["task_error"]
        assert not v["reference_shared"]


# ---- the store itself ----------------------------------------------------------------------

class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def entry(n_bytes):
    return [[torch.zeros(n_bytes // 4)]], []


def test_the_store_evicts_the_least_recently_used_beyond_its_budget():
    s = refstore.Store(1000)
    assert s.put("a", {}, *entry(400)) and s.put("b", {}, *entry(400))
    assert s.get("a") is not None                 # a is now the most recently used
    assert s.put("c", {}, *entry(400))            # evicts b
    assert s.get("b") is None and s.get("a") is not None and s.get("c") is not None
    assert not s.put("d", {}, *entry(2000))       # larger than the whole budget
    assert not s.put("a", {}, *entry(100))        # first publisher wins
    assert s.stats()["evicted"] == 1 and s.stats()["bytes"] == 800
    assert s.stats()["version"] == 4              # three puts and an eviction changed what it holds
    assert not refstore.Store(0).put("a", {}, *entry(4))     # sharing off


def test_an_entry_in_use_is_not_evicted():
    # Evicted while a judge used it, it stayed on the device outside the store's count.
    s = refstore.Store(1000)
    u, w = object(), object()
    assert s.put("a", {}, *entry(400)) and s.get("a", owner=u) and s.get("a", owner=w)
    assert s.put("b", {}, *entry(400))
    assert s.put("c", {}, *entry(400))     # a is the least recently used, but in use: b goes
    assert s.get("a") is not None and s.get("b") is None and s.get("c") is not None
    assert s.stats()["in_use"] == 1 and s.stats()["bytes"] == 800
    assert s.get("c", owner=u)
    assert not s.put("d", {}, *entry(400))  # both in use: refused, nothing evicted
    assert s.stats()["evicted"] == 1 and s.stats()["bytes"] == 800
    s.release(u)                           # w still uses a; c is free
    assert s.put("d", {}, *entry(400)) and s.get("c") is None and s.get("a") is not None
    s.release(w)
    assert s.put("e", {}, *entry(400)) and s.stats()["in_use"] == 0 and s.stats()["bytes"] == 800


def test_a_key_refused_for_room_is_not_claimed_again_until_there_is_room():
    # Its next publisher would copy every seed's outputs only to be refused again.
    s = refstore.Store(1000)
    u, judge = object(), object()
    assert s.put("a", {}, *entry(800)) and s.get("a", owner=u)
    assert s.claim("b", judge) and not s.put("b", {}, *entry(400))   # a is in use
    assert not s.claim("b", judge)
    assert s.claim("c", judge)              # another key, never refused: may try
    s.release(judge)
    s.release(u)                            # room again
    assert s.claim("b", judge) and s.put("b", {}, *entry(400))


def test_asking_whether_an_entry_exists_keeps_nothing_but_its_recency():
    s = refstore.Store(1000)
    assert not s.has("a")
    assert s.put("a", {}, *entry(400)) and s.put("b", {}, *entry(400))
    assert s.has("a")                             # a is now the most recently used ...
    assert s.put("c", {}, *entry(400))            # ... so b goes
    assert s.has("a") and not s.has("b")
    assert s.put("d", {}, *entry(400))            # a was asked for after c: c goes
    assert not s.has("c") and s.has("a") and s.stats()["bytes"] == 800


def test_trim_evicts_only_entries_that_no_evaluation_works_on():
    clock = Clock()
    s = refstore.Store(1 << 20, clock=clock)
    u = object()
    for k in "abcde":
        assert s.put(k, {}, *entry(100))
    assert s.get("b", owner=u)                 # a judge uses b
    clock.t += refstore.TRIM_IDLE_S
    assert s.has("e")                          # asked for just now: its evaluation may not have said so yet
    v = s.stats()["version"]
    # Down to 150 bytes: a and d may go (c is a running evaluation's task); b, c, e stay.
    assert s.trim(150, keep={"c"}) == 2
    st = s.stats()
    assert st["bytes"] == 300 and st["evicted"] == 2 and st["version"] == v + 2
    assert s.trim(0, keep={"c"}) == 0          # nothing more may go yet
    clock.t += refstore.TRIM_IDLE_S
    assert s.trim(250, keep={"c"}) == 1        # e, idle now: one is enough for the target
    assert s.get("b") is not None and s.get("c") is not None and s.get("e") is None
    s.release(u)
    clock.t += refstore.TRIM_IDLE_S
    assert s.trim(0) == 2 and s.stats()["bytes"] == 0


def test_a_trim_goes_least_recently_used_first():
    clock = Clock()
    s = refstore.Store(1 << 20, clock=clock)
    for k in "abc":
        assert s.put(k, {}, *entry(100))
    assert s.has("a")
    clock.t += refstore.TRIM_IDLE_S
    assert s.trim(200) == 1 and s.get("b") is None and s.get("a") is not None and s.get("c") is not None


def test_a_shared_before_figure_expires():
    clock = Clock()
    s = refstore.Store(1 << 20, clock=clock)
    s.put("a", {"spec": []}, *entry(4))
    assert s.get("a")[0]["before"] is None
    assert s.set_before("a", {"median_ms": 1.0}) and not s.set_before("zz", {"median_ms": 1.0})
    assert s.get("a")[0]["before"] == {"median_ms": 1.0}
    assert s.before("a") == {"median_ms": 1.0} and s.before("zz") is None
    clock.t += refstore.BEFORE_TTL_S + 1
    assert s.get("a")[0]["before"] is None        # re-measured by the next window
    assert s.before("a") is None


def test_the_key_covers_the_source_and_the_reference_options():
    job = {"task": {"source": "x = 1\n"}}
    base = refstore.key(job, {"seeds": 5, "seed": 0, "atol": None, "rtol": None, "copy_weights": False})
    assert base == refstore.key(job, {"seeds": 5, "seed": 0, "atol": None, "rtol": None, "copy_weights": False,
                                      "timing_budget_ms": 10})      # timing options: the same work
    assert base != refstore.key({"task": {"source": "x = 2\n"}}, {"seeds": 5, "seed": 0})
    for k, val in (("seeds", 3), ("seed", 1), ("atol", 1e-3), ("rtol", 1e-3), ("copy_weights", True)):
        opts = {"seeds": 5, "seed": 0, "atol": None, "rtol": None, "copy_weights": False, k: val}
        assert refstore.key(job, opts) != base, k


def test_one_judge_at_a_time_publishes_a_key():
    s, a, b = refstore.Store(1 << 20), object(), object()
    assert s.claim("k", a) and s.claim("k", a)      # its own claim, asked again
    assert not s.claim("k", b)                      # b does its own work, keeps no copies
    s.release(a)                                    # a ended without publishing
    assert s.claim("k", b)
    assert s.put("k", {}, *entry(4))
    assert not s.claim("k", a)                      # published: nothing left to claim
    assert not refstore.Store(0).claim("k", a)      # sharing off
