"""The timing loop's schedule (which iterations are re-checked, when it stops), with the
CUDA-specific single call replaced: the schedule is what keeps late cheaters visible."""

import os
import random

os.environ.setdefault("TRITON_INTERPRET", "1")

from kgharness import timing  # noqa: E402


def run_loop(monkeypatch, budget_ms, per_call_ms=0.0, seed=0, n_calls=None):
    calls, checked = [], []
    clock = [0.0]

    def fake_one(fn, inp, window, flusher):
        calls.append(inp)
        clock[0] += per_call_ms / 1e3
        return 1.0, 0.0, inp

    monkeypatch.setattr(timing, "_one", fake_one)
    monkeypatch.setattr(timing, "_sync", lambda: None)
    monkeypatch.setattr(timing.T, "perf_counter", lambda: clock[0])

    def recheck(k, saved, out):
        checked.append(k)
        return None

    st, obs = timing.time_model(lambda *x: x, lambda k: [k], flusher=lambda: None, budget_ms=budget_ms,
                                min_iters=10, max_iters=500, rng=random.Random(seed), recheck=recheck)
    return st, checked


def test_last_iteration_and_an_early_one_are_always_rechecked(monkeypatch):
    for seed in range(20):
        st, checked = run_loop(monkeypatch, budget_ms=100, per_call_ms=2.0, seed=seed)
        n = st["iterations"]
        assert n - 1 in checked, (seed, n, checked)          # the loop's final iteration
        assert any(k < 10 for k in checked), (seed, checked)  # one among the guaranteed ones
        assert all(k < n for k in checked)


def test_budget_bounds_the_loop_but_not_below_min_iters(monkeypatch):
    st, _ = run_loop(monkeypatch, budget_ms=10, per_call_ms=5.0)
    assert st["iterations"] == 10
    st, _ = run_loop(monkeypatch, budget_ms=100, per_call_ms=1.0)
    assert 10 <= st["iterations"] <= 110
