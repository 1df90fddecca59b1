"""The timing window on the CPU (option cpu_timing): the protocol a GPU runs, on host
clocks. The figures are not comparable (no speedup on a CPU); what is tested is what
the judge checks: its own clock against the runners', timed outputs compared with the
reference's, and the candidate's buffer checksummed between its calls."""

import os

os.environ["TRITON_INTERPRET"] = "1"  # before triton is imported anywhere

from _evalhelp import ADD_RELU, fixture, patched, run  # noqa: E402

TIMED = dict(seeds=2, cpu_timing=True, min_iters=4, timing_budget_ms=20)


def test_honest_kernel_is_timed_and_passes_the_wall_check(tmp_path):
    v = run(tmp_path, "task_add_relu.py", fixture(ADD_RELU), **TIMED)
    assert v["status"] == "correct", v["feedback"]
    assert v["runtime"]["iterations"] >= 4 and v["runtime"]["median_ms"] > 0
    assert v["ref_runtime_before"]["iterations"] >= 4 and v["ref_runtime_after"]["iterations"] >= 4
    w = v["wall_check"]
    assert w["cand_overhead_ms"] - w["ref_overhead_ms"] <= w["limit_ms"], w
    assert v["speedup"] is None and v["timing_mode"] == "cpu_interpreter"
    assert "timing" in v["stage_ms"]
    # The runners' word on where their timed requests went: inside the judge's clock.
    st = v["stage_ms"]
    assert 0 < st["window_go_timed"] and 0 <= st["window_go_inputs"] and 0 <= st["window_go_write"], st
    assert st["window_go_inputs"] + st["window_go_timed"] + st["window_go_write"] <= st["window_go"], st


def test_a_correctness_calls_parts_are_the_runners_word_inside_the_judges_clock(tmp_path):
    v = run(tmp_path, "task_softmax.py", fixture("cand_softmax.py"), seeds=3)
    st = v["stage_ms"]
    assert v["status"] == "correct" and st["trial_call_n"] >= 2, st   # seeds 2 and 3, extra calls
    parts = [st[f"trial_call_{k}"] for k in ("inputs", "in_sum", "run", "after")]
    assert all(x >= 0 for x in parts) and st["trial_call_run"] > 0, st
    assert sum(parts) <= st["trial_calls"], st
    assert 0 < st["trial_held"] <= st["trial_calls"] - sum(parts), st     # the task has a held-out set


def test_a_correctness_calls_parts_are_summed_when_they_are_numbers_and_ignored_otherwise():
    from kgharness.judge.trials import Trials
    t = Trials.__new__(Trials)
    t.judge = type("J", (), {"verdict": {"stage_ms": {}}})()
    t.call_parts({"parts_ms": {"inputs": 0.5, "in_sum": 1.0, "run": 2.0, "after": 0.25, "other": 9.0}})
    t.call_parts({"parts_ms": {"inputs": True, "run": -1.0, "after": float("nan")}})
    t.call_parts({"parts_ms": "lies"})
    t.call_parts("lies")
    assert t.judge.verdict["stage_ms"] == {"trial_call_n": 2, "trial_call_inputs": 0.5, "trial_call_in_sum": 1.0,
                                     "trial_call_run": 2.0, "trial_call_after": 0.25}, t.judge.verdict["stage_ms"]


def test_a_runners_parts_are_summed_when_they_are_numbers_and_ignored_otherwise():
    from kgharness.judge.timedcalls import TimedCalls
    w = TimedCalls.__new__(TimedCalls)
    w.spent = {}
    w.go_parts({"inputs": 0.5, "timed": 2.0, "write": 0.25, "other": 9.0})
    w.go_parts({"inputs": True, "timed": -1.0, "write": float("nan")})
    w.go_parts("lies")
    w.go_parts({"timed": 1e9, "write": 0.25})
    assert w.spent == {"go_inputs": 0.5, "go_timed": 2.0, "go_write": 0.5}, w.spent


def test_no_timing_without_cpu_timing(tmp_path):
    v = run(tmp_path, "task_add_relu.py", fixture(ADD_RELU), seeds=1)
    assert v["status"] == "correct" and v["runtime"] is None and v["wall_check"] is None


FORGED_TIMER = '''
import sys as _sys
_timing = _sys.modules["kgharness.timing"]
_real = _timing.timed_call


def _fast(*args, **kwargs):
    ms, *rest = _real(*args, **kwargs)
    return (ms / 50, *rest)


_timing.timed_call = _fast
'''

SILENCE = '''
import sys as _sys
_guards = _sys.modules["kgharness.guards"]
_guards.Guard.check = lambda self: None
_guards.Guard._add = lambda self, flag, detail: None
'''


def test_forged_timer_is_caught_by_the_judges_clock(tmp_path):
    v = run(tmp_path, "task_add_relu.py", fixture(ADD_RELU) + FORGED_TIMER + SILENCE, **TIMED)
    assert v["status"] == "reward_hack" and "forge" in v["hack_flags"], (v["hack_flags"], v["feedback"])
    assert v["speedup"] is None and not v["correct"]
    assert "judge's clock" in v["feedback"]
    assert "window_recheck_excess_ms" in v["stage_ms"]      # over the limit in both plans


# Its timer forged for its first 12 timed calls only: the window's first plan (1-2 warm-up
# calls and, with max_iters 10 and a budget no plan runs out of, ten pairs) and at most
# the second plan's warm-up. With the usual 20 ms budget a slow host ended the first
# plan early (at min_iters, when the plan's time ran out) and the forged calls ran on
# into the second plan's pairs.
FORGED_FIRST_PLAN = FORGED_TIMER.replace("def _fast(*args, **kwargs):\n    ms, *rest = _real(*args, **kwargs)\n",
                                         "_n = [0]\n\n\ndef _fast(*args, **kwargs):\n    ms, *rest = _real(*args, **kwargs)\n"
                                         "    _n[0] += 1\n    if _n[0] > 12:\n        return (ms, *rest)\n")


def test_a_wall_check_over_its_limit_once_is_measured_again_before_forge(tmp_path):
    assert FORGED_FIRST_PLAN != FORGED_TIMER
    v = run(tmp_path, "task_add_relu.py", fixture(ADD_RELU) + FORGED_FIRST_PLAN + SILENCE,
            **dict(TIMED, max_iters=10, timing_budget_ms=5000))
    # The first plan was over the limit (a forger's figures), the second decided: honest.
    assert v["stage_ms"]["window_recheck_excess_ms"] > v["wall_check"]["limit_ms"], (v["stage_ms"], v["wall_check"])
    assert v["status"] == "correct" and "forge" not in v["hack_flags"], (v["hack_flags"], v["feedback"])
    w = v["wall_check"]
    assert w["cand_overhead_ms"] - w["ref_overhead_ms"] <= w["limit_ms"], w


LATE_CHEAT = ("        global _calls\n        _calls = _calls + 1\n"
              "        if _calls > 8:\n            return torch.zeros_like(x)\n"
              "        out = torch.empty_like(x)\n")


def test_a_kernel_that_cheats_late_fails_the_timed_output_check(tmp_path):
    code = patched("        out = torch.empty_like(x)\n", LATE_CHEAT).replace("class ModelNew", "_calls = 0\n\n\nclass ModelNew")
    v = run(tmp_path, "task_add_relu.py", code + SILENCE, **dict(TIMED, min_iters=12))
    assert v["status"] == "reward_hack" and "cache" in v["hack_flags"], (v["status"], v["hack_flags"], v["feedback"])


WRITE_AFTER_DONE = '''
import gc as _gc
import threading as _threading
import time as _time


def _scribble():
    while True:
        for _o in _gc.get_objects():
            if type(_o).__name__ == "Runner" and getattr(_o, "buffers", None):
                for _views, _keys in list(_o.buffers.values()):
                    for _v in _views:
                        _v.fill_(0)
        _time.sleep(0.001)


_threading.Thread(target=_scribble, daemon=True).start()
'''


def test_writes_into_the_judges_buffer_after_done_are_caught(tmp_path):
    v = run(tmp_path, "task_add_relu.py", fixture(ADD_RELU) + SILENCE + WRITE_AFTER_DONE, **TIMED)
    assert v["status"] != "correct", v
    assert v["speedup"] is None


def test_one_head_start_for_both_sides_follows_the_larger_median_enqueue_within_bounds():
    from kgharness.judge import timedcalls as W

    class Runner:
        def __init__(self, role):
            self.role = role

    ref, cand = Runner("reference"), Runner("candidate")
    w = W.TimedCalls.__new__(W.TimedCalls)   # the head start's bookkeeping alone, no evaluation
    w.head_ms, w.enqueue = W.HEAD_MS[0], {"reference": [], "candidate": []}
    w.size_head(ref, 0.1)
    assert w.head_ms == W.HEAD_MS[0]
    w.size_head(cand, 0.4)
    assert w.head_ms == W.HEAD_MARGIN * 0.4, "the larger side's median sets it for both"
    for _ in range(2):
        w.size_head(cand, 0.5)
    w.size_head(cand, 9.0)   # one slow enqueue does not move the median much
    assert w.head_ms == W.HEAD_MARGIN * 0.5
    for bad in (True, -1.0, 0, float("nan"), float("inf"), "9", None, 1e9):
        w.size_head(cand, bad)
    assert w.head_ms == W.HEAD_MARGIN * 0.5 and w.enqueue["candidate"] == [0.4, 0.5, 0.5, 9.0]
    for _ in range(5):
        w.size_head(ref, 1e5)
    assert w.head_ms == W.HEAD_MS[1]
    w.head_ms = None   # CPU mode: no spin, nothing to size
    w.size_head(cand, 5.0)
    assert w.head_ms is None


def test_a_hopelessly_slow_candidate_stops_being_timed_after_a_few_calls():
    from kgharness.judge.window import SLOW_CALLS, SLOW_RATIO, Window
    slow = {"reference": (1.0, 1.1), "candidate": (SLOW_RATIO * 1.01, SLOW_RATIO * 1.01 + 0.1)}
    close = {"reference": (1.0, 1.1), "candidate": (SLOW_RATIO * 0.9, SLOW_RATIO * 0.9 + 0.1)}
    fast = {"reference": (1.0, 1.1), "candidate": (0.5, 0.6)}
    s, c = SLOW_RATIO * 1.01, SLOW_RATIO * 0.9
    assert SLOW_CALLS == 3
    assert Window.hopeless([slow] * 3)
    assert not Window.hopeless([slow] * 2)                   # too few calls to say
    assert Window.hopeless([slow] * 2, warm=[s])             # a warm-up counts as a call
    assert Window.hopeless([slow], warm=[s, s])
    assert not Window.hopeless([slow], warm=[s])
    assert not Window.hopeless([close] * 3, warm=[s, s])
    assert not Window.hopeless([fast], warm=[s, s]), "slow warm-ups, a fast timed call: cold, not slow"
    assert not Window.hopeless([fast, slow], warm=[s, s]), "the timed calls' median is not slow"
    assert Window.hopeless([slow, slow], warm=[c]), "two of three calls over the ratio, as two of three pairs were"
    assert not Window.hopeless([slow, close], warm=[s]), "the two timed calls' median is under the ratio"
    assert not Window.hopeless([], warm=[s, s, s])


def test_a_window_stops_after_its_first_pair_when_the_warm_ups_were_as_slow():
    from kgharness.judge.window import SLOW_RATIO
    s = SLOW_RATIO * 1.01
    slow = _pair(1.0, s)
    w = _bare_window(5, 10, [slow] * 20)
    w.warm = lambda *a: [s, s]
    assert len(w.interleave()) == 1 and w.checked == [0]
    w = _bare_window(5, 10, [slow] * 20)
    w.warm = lambda *a: [s]
    assert len(w.interleave()) == 2 and w.checked == [0, 1]
    w = _bare_window(5, 10, [_pair(1.0, 0.5)] * 20)
    w.warm = lambda *a: [s, s]
    assert len(w.interleave()) >= 5, "cold warm-ups do not end the window of a fast kernel"


def _bare_window(min_iters, planned, times):
    """A Window with its runners' calls replaced: each pair takes the next of times."""
    import random
    import types

    from kgharness.judge.window import Window
    w = Window.__new__(Window)
    w.min_iters, w.budget, w.gpu = min_iters, 50.0, True
    w.judge = types.SimpleNamespace(rng=random.Random(7), ctx=types.SimpleNamespace(mode="gpu"))
    w.reference, w.candidate, w.trials = "R", "C", types.SimpleNamespace(cand_buf=None)
    it = iter(times)
    w.checked = []
    w.calls = types.SimpleNamespace(paired=lambda first, second, seed: next(it), check_pending=lambda *a: None,
                                    verify=w.checked.append)
    w.warm = lambda *a: []
    w.count = lambda budget_ms, per_call_ms: planned
    return w


def _pair(ref_ms, cand_ms, ref_over=0.5, cand_over=0.5):
    return {"reference": (ref_ms, ref_ms + ref_over), "candidate": (cand_ms, cand_ms + cand_over)}


def test_a_window_compares_every_timed_output_settled_or_not():
    """A random handful compared let a candidate that zeroed every other timed output
    through whenever the handful fell on its honest calls (hacks/phase_detect_alternate)."""
    import random
    steady = [_pair(2.67 * (1 + 1e-4 * (i % 3)), 0.74 * (1 + 1e-4 * (i % 2))) for i in range(40)]
    for seed in range(20):
        w = _bare_window(5, 10, steady)
        w.judge.rng.seed(seed)
        rows = w.interleave()
        assert len(rows) == 5, "0.01% apart: settled at min_iters"
        assert w.checked == list(range(5)), w.checked
    rng = random.Random(1)
    noisy = [_pair(2.67 * rng.uniform(0.8, 1.2), 0.74 * rng.uniform(0.8, 1.2)) for _ in range(40)]
    w = _bare_window(5, 10, noisy)
    assert len(w.interleave()) == 10 and w.checked == list(range(10)), w.checked


def test_a_noisy_or_close_window_runs_its_whole_plan():
    import random
    rng = random.Random(1)
    noisy = [_pair(2.67 * rng.uniform(0.8, 1.2), 0.74 * rng.uniform(0.8, 1.2)) for _ in range(40)]
    assert len(_bare_window(5, 10, noisy).interleave()) == 10
    # Steady times, but the candidate's overhead 0.21 ms over the reference's: near the
    # 0.25 ms limit (over 0.8 of it) the wall check gets every pair it planned.
    close = [_pair(2.67, 0.74 * (1 + 1e-4 * (i % 2)), cand_over=0.71) for i in range(40)]
    assert len(_bare_window(5, 10, close).interleave()) == 10
    roomy = [_pair(2.67, 0.74 * (1 + 1e-4 * (i % 2)), cand_over=0.69) for i in range(40)]
    assert len(_bare_window(5, 10, roomy).interleave()) == 5
    # Steady times, overheads that swing from call to call: the paired excess's median
    # (0.04 ms) is small, the two sides' medians (what the wall check compares, limit
    # 0.25 ms) are 0.51 ms apart. An honest level2 kernel failed the wall check after 5
    # pairs on an H200 with a settling rule that looked at the paired median.
    swing = [(2.06, 2.57), (2.06, 2.1), (2.06, 2.1), (4.0, 2.57), (4.0, 2.57)] * 8
    noisy_over = [_pair(0.1, 0.09 * (1 + 1e-4 * (i % 2)), ref_over=r, cand_over=c)
                  for i, (r, c) in enumerate(swing)]
    assert len(_bare_window(5, 10, noisy_over).interleave()) == 10
    # min_iters is a floor the rule never goes under.
    steady = [_pair(2.67, 0.74 * (1 + 1e-4 * (i % 2))) for i in range(40)]
    assert len(_bare_window(8, 10, steady).interleave()) == 8


def test_a_window_asks_for_the_before_figure_its_shared_entry_lacked():
    """An evaluation that started with its group's first took no entry, or one with no
    reference-alone figure yet: its window asks the store, and times the reference alone
    only when the store has none (or sharing is off for it)."""
    import types

    from kgharness.judge.window import Window
    asked = []

    def window(shared, share_on, published):
        w = Window.__new__(Window)
        w.judge = types.SimpleNamespace(sharing=types.SimpleNamespace(entry=shared, enabled=share_on, key="k"),
                                        verdict={"stage_ms": {}})
        w.ops = types.SimpleNamespace(before=lambda key: asked.append(key) or {"before": published})
        return w
    fig = {"median_ms": 2.5}
    w = window(None, True, fig)
    assert w.shared_before() == fig and w.judge.verdict["stage_ms"]["window_before_shared"] == 1.0 and asked == ["k"]
    assert window({"before": None}, True, fig).shared_before() == fig and asked == ["k", "k"]
    assert window({"before": {"median_ms": 1.0}}, True, fig).shared_before() == {"median_ms": 1.0}
    assert asked == ["k", "k"]                                  # its own entry had one: not asked
    assert window(None, True, None).shared_before() is None
    assert window(None, False, fig).shared_before() is None and asked == ["k", "k", "k"]


def test_one_spike_in_five_pairs_does_not_hold_a_window_to_its_whole_plan():
    """A heavy window whose overheads were steady but for one call 1.3-4 ms off ran all ten
    pairs (H200, 2026-12-03): the spread estimate took the spike in. Two spikes on one
    side of five still do."""
    def window(spikes):
        over = [0.5 + (3.0 if i in spikes else 0.0) for i in range(10)]
        rows = [_pair(2.67, 0.74 * (1 + 1e-4 * (i % 2)), cand_over=over[i]) for i in range(10)]
        return _bare_window(5, 10, rows).interleave()
    assert len(window(set())) == 5
    assert len(window({2})) == 5
    assert len(window({1, 3})) > 5
    # A spike in the timed calls themselves, likewise.
    rows = [_pair(2.67, 0.74 * (1.3 if i == 4 else 1 + 1e-4 * (i % 2))) for i in range(10)]
    assert len(_bare_window(5, 10, rows).interleave()) == 5
    rows = [_pair(2.67, 0.74 * (1.3 if i in (3, 4) else 1 + 1e-4 * (i % 2))) for i in range(10)]
    assert len(_bare_window(5, 10, rows).interleave()) > 5


def test_the_relative_error_of_a_median():
    from kgharness.judge.window import _rel_error
    assert _rel_error([1.0, 1.0]) == float("inf")
    assert _rel_error([1.0] * 5) == 0.0
    wide, narrow = [0.9, 1.0, 1.1] * 3, [0.99, 1.0, 1.01] * 3
    assert _rel_error(wide) > _rel_error(narrow) > 0
    assert abs(_rel_error(narrow * 4) - _rel_error(narrow) / 2) < 1e-3 * _rel_error(narrow)


def test_the_buffer_checksum_sees_any_changed_word_and_the_tail():
    import torch
    from kgharness.correctness import fingerprint
    u8 = torch.arange(1003, dtype=torch.int64).to(torch.uint8)     # not a multiple of 8
    base = fingerprint(u8)
    assert fingerprint(u8.clone()) == base
    for i in (0, 500, 1001):
        other = u8.clone()
        other[i] += 1
        assert fingerprint(other) != base, i
    assert fingerprint(torch.zeros(0, dtype=torch.uint8)) == 0


def test_a_runners_checksum_sees_any_changed_byte_in_any_view_and_reads_in_one_transfer():
    import torch
    from kgharness import inputs as I
    x = torch.randn(1001, dtype=torch.bfloat16)
    views = [x, x[1:], x[3:], x.view(7, 143).t(), torch.tensor(5), torch.arange(10, dtype=torch.int8)]
    base = I.read_sums(I.fingerprint(views))[0]
    assert len(base) == len(views) and I.fingerprint([torch.zeros(0)]) == []
    # The same bytes sum alike however they are laid out (misaligned slices are copied).
    assert base[1] == I.read_sums(I.fingerprint([x[1:].clone()]))[0][0]
    assert base[3] == I.read_sums(I.fingerprint([x.view(7, 143).t().contiguous()]))[0][0]
    for i in (0, 500, 999, 1000):     # words and the tail
        y = x.clone()
        y[i] += 1
        assert I.read_sums(I.fingerprint([y]))[0][0] != base[0], i
    a, b = I.read_sums(I.fingerprint(views[:2]), I.fingerprint(views[2:3]))
    assert a == base[:2] and b == base[2:3]
    assert I.input_sum([x, 3]) == [base[0], "3"]


def test_a_runner_frees_its_last_inputs_and_outputs_before_making_new_ones(tmp_path):
    """Admission sizes a task's evaluations by their runners' peak memory: a runner that
    kept the last inputs or outputs while making the next held two sets at its peak."""
    import gc
    import weakref

    import torch
    from kgharness.runner.handler import Runner

    made, alive = [], []

    def get_inputs():
        alive.append(sum(r() is not None for r in made))
        x = torch.ones(256)
        made.append(weakref.ref(x))
        return [x]

    def model(x):
        y = x * 2
        made.append(weakref.ref(y))
        return y

    r = Runner("reference", {}, "cpu_interpreter", "cpu", str(tmp_path))
    r.get_inputs, r.model, r.held = get_inputs, model, []
    try:
        for op, req in (("call", {"inputs": {"seed": 1}}), ("call", {"inputs": {"seed": 2}}),
                        ("sum", {"inputs": {"seed": 3}}), ("call", {"inputs": {"seed": 4}}),
                        ("go", {"seed": 5}), ("go", {"seed": 6}),
                        ("call", {"inputs": {"seed": 7}})):
            rep = r.handle(dict(req, op=op), [])
            assert rep.get("ok", True) is not False, (op, rep)
    finally:
        gc.enable()
    assert len(alive) == 7
    assert alive == [0] * 7, f"earlier inputs or outputs alive while new inputs were made: {alive}"


def test_a_candidate_under_the_floor_has_the_bandwidth_measured_again_before_it_is_flagged():
    """One low bandwidth figure (other work slowed its measurement) must not flag an honest
    kernel: under the floor, the window measures again, twice at most; the service keeps
    the most any measurement gave."""
    import types

    from kgharness.judge import bufferops
    from kgharness.judge.window import Window
    spec = [{"kind": "tensor", "dtype": "bfloat16", "shape": [7168], "device": "cuda"}]
    figures = iter([4.4e9, 4.5e9])                 # bytes per ms: what measuring again gives
    asked = []

    def bandwidth(again=False):
        asked.append(again)
        return next(figures)

    w = Window.__new__(Window)
    w.gpu, w.bandwidth = True, 3.587e9                     # the low first figure
    w.judge = types.SimpleNamespace(min_bytes=15_032_385_536, verdict={"stage_ms": {}})
    w.trials, w.ops = types.SimpleNamespace(spec=spec), types.SimpleNamespace(bandwidth=bandwidth)
    honest = [_pair(4.8, 3.30)] * 5                 # 15 GB in 3.30 ms: 4.55 TB/s
    assert w.floor_ms() > 3.30
    w.recheck_bandwidth(honest)
    assert asked == [True] and w.bandwidth == 4.4e9 and w.floor_ms() < 3.30
    assert w.judge.verdict["stage_ms"]["window_bandwidth_again"] == 1.0
    # A kernel under any honest floor is measured against twice more, then left to conclude.
    figures, asked[:] = iter([4.4e9, 4.5e9]), []
    w.bandwidth = 3.587e9
    w.recheck_bandwidth([_pair(4.8, 1.0)] * 5)
    assert asked == [True, True] and w.bandwidth == 4.5e9 and w.floor_ms() > 1.0
    # The service keeps the most any measurement gave.
    measured = iter([4.0e9, 3.5e9, 4.2e9])
    orig, bufferops.timing.bandwidth_bytes_per_ms = bufferops.timing.bandwidth_bytes_per_ms, \
        lambda device: next(measured)
    try:
        ops = bufferops.Local.__new__(bufferops.Local)
        ops.gpu, ops.device = True, "test-device"
        assert [ops.bandwidth(), ops.bandwidth(), ops.bandwidth(again=True), ops.bandwidth(again=True)] == \
            [4.0e9, 4.0e9, 4.0e9, 4.2e9]
    finally:
        bufferops.timing.bandwidth_bytes_per_ms = orig
        bufferops.Local._bw.pop("test-device", None)


def test_a_pair_asks_the_judge_service_three_times_and_still_checks_every_buffer():
    """Inside a pair the first call's checksum after and the second's before are one
    request, and the pair's comparison rides on the last: 3 requests a pair, not 5. Each
    call still has one request before it and one after it, and a candidate buffer that
    changed between its call and its next is still `forge`."""
    import types

    from kgharness.judge.timedcalls import TimedCalls

    class Failed(Exception):
        pass

    log, fps, flags = [], {"rb": 11, "cb": 22}, []

    class Ops:
        def fingerprint(self, b):
            log.append(("fingerprint", b))
            return fps[b]

        def checks(self, ids, compare=None):
            log.append(("checks", tuple(ids), compare is not None))
            return {"fps": [fps[b] for b in ids], "compare": {"ok": True, "msg": ""} if compare else None}

    class Runner:
        def __init__(self, role):
            self.role = role

        def stop(self):
            log.append(("stop", self.role))

        def cont(self):
            log.append(("cont", self.role))

    def ask(r, op, **_k):
        log.append((op, r.role))
        return {"ms": 1.0, "written": True}

    def fail(*_a):
        raise Failed()

    w = TimedCalls.__new__(TimedCalls)
    ref, cand = Runner("reference"), Runner("candidate")
    w.trials = types.SimpleNamespace(ref_buf="rb", cand_buf="cb", spec=[], tol={})
    w.ops, w.pending, w.compared, w.head_ms = Ops(), None, None, None
    w.enqueue = {"reference": [], "candidate": []}
    w.spent = {"go": 0.0, "check": 0.0, "calls": 0, "switch": 0.0, "verify": 0.0, "verifies": 0}
    w.judge = types.SimpleNamespace(talk=types.SimpleNamespace(ask=ask), fail=fail, flag=lambda f, d: flags.append(f))
    out = w.paired(cand, ref, 5)
    assert set(out) == {"reference", "candidate"}
    assert log == [("stop", "reference"), ("fingerprint", "cb"), ("go", "candidate"),
                   ("checks", ("cb", "rb"), False), ("cont", "reference"), ("stop", "candidate"),
                   ("go", "reference"), ("checks", ("rb",), True), ("cont", "candidate")], log
    assert w.pending == 22 and w.compared == {"ok": True, "msg": ""}
    w.verify(0)
    assert w.compared is None and w.spent["verifies"] == 1 and w.spent["calls"] == 2
    # The candidate second: its checksum before rides on the reference's after, and
    # its buffer changed since its last call.
    log.clear()
    fps["cb"] = 23
    try:
        w.paired(ref, cand, 6)
        raise AssertionError("a changed buffer passed")
    except Failed:
        pass
    assert flags == ["forge"]
    assert log == [("stop", "candidate"), ("fingerprint", "rb"), ("go", "reference"),
                   ("checks", ("rb", "cb"), False), ("cont", "candidate")], log


def test_a_timed_output_off_like_numbers_is_incorrect_and_one_off_like_a_cache_is_a_hack():
    """An honest bf16 kernel had 4 of 2^29 outputs 3 ULPs off on one timed seed (H200):
    `incorrect` on that input, as a correctness trial would say, not `cache`."""
    import types

    import pytest
    from kgharness.judge import timedcalls
    from kgharness.judge.timedcalls import TimedCalls

    class Failed(Exception):
        pass

    def verdict_of(res):
        w = TimedCalls.__new__(TimedCalls)
        got = {}

        def fail(status, fb, sig=""):
            got.update(status=status, feedback=fb)
            raise Failed()
        w.judge = types.SimpleNamespace(flag=lambda name, why: got.setdefault("flags", []).append(name), fail=fail)
        w.spent, w.compared = {"verifies": 0}, dict(res, ok=False, msg="m")
        with pytest.raises(Failed):
            w.verify(3)
        return got

    numbers = {"n_bad": 4, "numel": 1 << 29, "nonfinite": 0, "worst_ratio": 1.09}
    assert timedcalls.numerical(numbers)
    got = verdict_of(numbers)
    assert got["status"] == "incorrect" and "timed call 3" in got["feedback"] and "flags" not in got
    for cache in (dict(numbers, n_bad=1 << 28),          # most of it: another input's outputs
                  dict(numbers, nonfinite=1),            # NaN or Inf
                  dict(numbers, worst_ratio=40.0),       # far off
                  dict(numbers, numel=1000, n_bad=1),    # a small output: any mismatch
                  {}):                                   # nothing to judge by
        assert not timedcalls.numerical(cache)
        got = verdict_of(cache)
        assert got["status"] == "reward_hack" and got["flags"] == ["cache"], (cache, got)
