"""A soak of one `kernelgate serve` (CPU mode, the ci tasks, mixed verdicts) for SOAK_S
seconds (default 180) of mixed load: synchronous rewards, asynchronous batches, searches
with the scripted LLM, exports and reads, across four server lifetimes: a SIGTERM and
restart, a kill -9 and restart, and 4 KiB of noise written into the store's biggest block
while stopped. The server's RSS, goroutines and open files must stay flat in each lifetime
(soakcheck.py has the rule), and every reward or batch item that got an accepted answer
must be in the Parquet log exactly once. A second test runs the same checks against a
binary built with -tags soakleak (cmd/kernelgate/soakleak.go), which leaks, and requires
the checker to say so.

SOAK_S sets the length, SOAK_SAMPLE_S the sampling period (2 s), SOAK_LEAK_S the leak run
(50 s); SOAK_SUMMARY names a file to copy the JSON summary to (scripts/measure/soak-hour.sh).
"""

import collections
import json
import os
import shutil
import subprocess
import time

import pytest

import conftest
import soakcheck
from conftest import REPO, Serve, logged_rows
from soakload import CI, Load, Sampler, scripted_llm, solution

SOAK_S = float(os.environ.get("SOAK_S", "180"))
SAMPLE_S = float(os.environ.get("SOAK_SAMPLE_S", "2"))
LEAK_S = float(os.environ.get("SOAK_LEAK_S", "50"))
# Lifetimes' shares of SOAK_S: the first is the longest, the one the flat-line rule sees best.
SHARES = (0.4, 0.2, 0.2, 0.2)
LOOPS = [("rewards", 0.5), ("batches", 1.0), ("searches", 2.0), ("reads", 0.5)]


def logged_ids(data):
    return [r["eval_id"] for r in logged_rows(data, "evaluations", ["eval_id"])]


def wait_logged(data, want, timeout_s=150):
    """Polls the log until it holds every id of want. Events the sink had in hand at a
    kill -9 come back after the bus's ack wait (20 s)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if want <= set(logged_ids(data)):
            return
        time.sleep(1)
    missing = want - set(logged_ids(data))
    raise AssertionError(f"{len(missing)} accepted items not logged after {timeout_s} s: {sorted(missing)[:5]}")


def damage_biggest_block(data):
    """4 KiB of noise into the middle of the biggest message block of the NATS store."""
    blocks = sorted((p.stat().st_size, p) for p in (data / "nats").rglob("*.blk"))
    assert blocks, "no message blocks in the store"
    size, path = blocks[-1]
    with open(path, "r+b") as f:
        f.seek(max(0, size // 2 - 2048))
        f.write(os.urandom(4096))
    return {"block": str(path.relative_to(data)), "size": size}


def write_summary(tmp_path, summary, text):
    path = tmp_path / "soak-summary.json"
    path.write_text(json.dumps(summary, indent=1, default=str))
    if os.environ.get("SOAK_SUMMARY"):
        shutil.copyfile(path, os.environ["SOAK_SUMMARY"])
    print(f"\n{text}\nsoak summary: {path}")
    return path


class Soak:
    """A server, its load and its sampler; begin() starts lifetime n, end() ends it."""

    def __init__(self, srv, load):
        self.srv, self.load = srv, load
        self.sampler = Sampler(srv, SAMPLE_S)
        self.events, self.damaged = [], None
        self.t0 = time.monotonic()
        self.sampler.thread.start()

    def note(self, what, **kw):
        self.events.append({"t_s": round(time.monotonic() - self.t0, 1), "event": what, **kw})

    def begin(self, life, how):
        t = time.monotonic()
        self.srv.start(timeout_s=180)
        self.note("started", life=life, how=how, start_s=round(time.monotonic() - t, 1))
        self.sampler.life = life
        self.sampler.up.set()
        # An export in the warm-up quarter, so that its memory high-water mark is set
        # before the quarters the flat-line rule compares.
        self.load.exports(-1)

    def end(self, how):
        self.sampler.up.clear()
        t = time.monotonic()
        code = self.srv.kill9() if how == "kill -9" else self.srv.stop()
        self.note("stopped", how=how, exit=code, stop_s=round(time.monotonic() - t, 1))
        return code

    def close(self):
        self.load.finish()
        self.sampler.stop.set()
        if self.srv.proc is not None and self.srv.proc.poll() is None:
            self.srv.stop()


def drive(soak):
    """The four lifetimes: SIGTERM and restart, kill -9 and restart, store damage while
    stopped and restart, and a clean stop with everything accepted logged."""
    srv, load = soak.srv, soak.load
    lives = [s * SOAK_S for s in SHARES]
    soak.begin(1, "first start")
    load.start(LOOPS + [("exports", max(15.0, SOAK_S / 40))])
    time.sleep(lives[0])
    assert soak.end("SIGTERM") == 0, srv.log()
    soak.begin(2, "restart after SIGTERM")
    time.sleep(lives[1])
    soak.end("kill -9")
    soak.begin(3, "restart after kill -9")
    time.sleep(lives[2])

    # The store is damaged with nothing in flight and everything accepted logged: the log
    # is the record, and it must keep every row through the damage.
    load.pause()
    wait_logged(srv.data, load.accepted_ids())
    assert soak.end("SIGTERM") == 0, srv.log()
    soak.damaged = damage_biggest_block(srv.data)
    soak.note("damaged", **soak.damaged)
    soak.begin(4, "restart after store damage")
    status, resp = load.call("rewards", "POST", "/v1/rewards", {
        "task_id": "ci/1_add_relu", "codes": [solution("1_add_relu") + "\n# soak after damage\n"], "wait_s": 300})
    load.accept(status, resp, 1)
    assert status == 200 and resp["results"][0]["status"] == "correct", (status, resp, srv.log())
    load.hold.clear()
    time.sleep(lives[3])

    load.pause()
    wait_logged(srv.data, load.accepted_ids())
    assert soak.end("SIGTERM") == 0, srv.log()


def summarize(soak, verdicts, wall_s, **extra):
    samples, load = soak.sampler.samples, soak.load
    return {"soak_s": SOAK_S, "sample_s": SAMPLE_S, "wall_s": round(wall_s, 1), "rule": soakcheck.__doc__,
            "verdicts": verdicts, "events": soak.events,
            "answers": {k: {str(s): n for s, n in c.items()} for k, c in load.answers.items()},
            "verdict_statuses": dict(load.statuses), "accepted_batches": len(load.accepted),
            "accepted_items": len(load.accepted_ids()), "samples": samples, **extra}


def report(soak, tmp_path, wall_s, **extra):
    """Writes the summary and prints the table, whether the soak got to its end or not."""
    load, samples = soak.load, soak.sampler.samples
    verdicts = soakcheck.judge(samples)
    answers = "; ".join(f"{k}: {dict(sorted(c.items(), key=str))}" for k, c in sorted(load.answers.items()))
    text = (soakcheck.table(verdicts, samples) + f"\nanswers: {answers}\nverdicts: {dict(load.statuses)}\n"
            f"accepted items {len(load.accepted_ids())}, wall {wall_s:.0f} s")
    write_summary(tmp_path, summarize(soak, verdicts, wall_s, damaged=soak.damaged, **extra), text)
    return verdicts


def test_soak_mixed_load_stays_flat_and_logs_every_accepted_item_once(tmp_path):
    t0 = time.monotonic()
    with scripted_llm() as llm:
        srv = Serve(tmp_path / "data", tmp_path, args=["--tasks", str(CI), "--llm-url", llm, "--model", "scripted"])
        soak = Soak(srv, Load(srv))
        try:
            drive(soak)
        finally:
            soak.close()
            ids = logged_ids(srv.data)
            verdicts = report(soak, tmp_path, time.monotonic() - t0, logged_rows=len(ids))
    load, samples = soak.load, soak.sampler.samples
    want = load.accepted_ids()

    missing = want - set(ids)
    assert not missing, f"{len(missing)} accepted items not in the log: {sorted(missing)[:5]}"
    twice = [k for k, n in collections.Counter(ids).items() if n > 1]
    assert not twice, f"evaluations logged more than once: {twice[:5]}"
    for kind in ("rewards", "batches", "searches", "exports"):
        assert sum(n for s, n in load.answers[kind].items() if s in (200, 201, 202)) > 0, (kind, load.answers[kind])
    errors = {k: {s: n for s, n in c.items() if isinstance(s, int) and s >= 500 and s not in (503, 507)}
              for k, c in load.answers.items()}
    assert not any(errors.values()), f"server errors: {errors}"
    assert load.statuses["correct"] and len(load.statuses) > 1, f"verdicts not mixed: {dict(load.statuses)}"
    judged = [v for v in verdicts if v["judged"]]
    assert judged, f"no lifetime long enough to judge: {verdicts}"
    assert not soakcheck.leaks(verdicts), soakcheck.table(verdicts, samples)


def build_leaky(out):
    go = shutil.which(os.environ.get("GO", "go"))
    if not go:
        pytest.fail("the Go toolchain is needed to build the soakleak binary (make build needs it too)")
    env = {**os.environ, "CGO_CFLAGS": os.environ.get("CGO_CFLAGS", "-O2 -Wno-deprecated-declarations")}
    # make build's flags, so that the build cache it filled serves all but package main.
    r = subprocess.run([go, "build", "-trimpath", "-tags", "soakleak", "-o", str(out), "./cmd/kernelgate"],
                       cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    return out


def test_the_checks_catch_a_leaking_build(tmp_path, monkeypatch):
    t0 = time.monotonic()
    monkeypatch.setattr(conftest, "BIN", build_leaky(tmp_path / "kernelgate-soakleak"))
    # The leak hangs on the gateway's request log lines, which are logged at info.
    srv = Serve(tmp_path / "data", tmp_path, args=["--tasks", str(CI), "--log-level", "info"])
    soak = Soak(srv, Load(srv))
    try:
        soak.begin(1, "leaking build")
        soak.load.start([("rewards", 0.5), ("reads", 0.1)])
        time.sleep(LEAK_S)
        soak.end("SIGTERM")
    finally:
        soak.close()
        verdicts = report(soak, tmp_path, time.monotonic() - t0, leak_build=True)
    flagged = {v["figure"] for v in soakcheck.leaks(verdicts)}
    assert flagged == set(soakcheck.FIGURES), soakcheck.table(verdicts, soak.sampler.samples)


# --- the rule itself, on synthetic series ---------------------------------------------------


def series(n, every_s, rss, goroutines, fds, life=1):
    return [{"t_s": i * every_s, "life": life, "rss_mib": rss(i * every_s), "goroutines": goroutines(i * every_s),
             "open_fds": fds(i * every_s)} for i in range(n)]


def wobble(base, amp):
    return lambda t: base + amp * ((int(t) * 7919) % 11 - 5) / 5


def test_rule_passes_a_flat_server_with_peaks_warm_up_and_designed_growth():
    def rss(t):
        warm = min(t, 30) * 2                          # pools fill in the first 30 s
        peak = 90 if int(t) % 60 in (40, 42) else 0     # an export
        return 90 + warm + t / 60 + peak                # + 1 MiB a minute by design
    samples = series(300, 2, rss, wobble(110, 8), wobble(24, 3))
    verdicts = soakcheck.judge(samples)
    assert all(v["judged"] for v in verdicts)
    assert not soakcheck.leaks(verdicts), soakcheck.table(verdicts, samples)


def test_rule_flags_each_leaking_figure():
    samples = series(30, 2, lambda t: 100 + 5 * t, lambda t: 110 + 3 * t, lambda t: 24 + 2 * t)
    assert {v["figure"] for v in soakcheck.leaks(soakcheck.judge(samples))} == set(soakcheck.FIGURES)
    samples = series(30, 2, wobble(100, 4), lambda t: 110 + 3 * t, wobble(24, 2))
    assert [v["figure"] for v in soakcheck.leaks(soakcheck.judge(samples))] == ["goroutines"]


def test_rule_judges_each_lifetime_alone_and_skips_short_ones():
    flat = series(40, 2, wobble(100, 4), wobble(110, 5), wobble(24, 2), life=1)
    restarted = series(40, 2, lambda t: 60 + 3 * t, wobble(110, 5), wobble(24, 2), life=2)  # below life 1, then climbing
    short = series(8, 2, lambda t: 100 + 50 * t, wobble(110, 5), wobble(24, 2), life=3)
    for s in restarted + short:
        s["t_s"] += 100 if s["life"] == 2 else 200
    verdicts = soakcheck.judge(flat + restarted + short)
    assert [(v["life"], v["figure"]) for v in soakcheck.leaks(verdicts)] == [(2, "rss_mib")]
    assert not any(v["judged"] for v in verdicts if v["life"] == 3)


def test_rule_passes_a_peak_that_fills_most_of_a_short_last_quarter():
    samples = series(18, 2, lambda t: 180 if t >= 28 and t != 34 else 110, wobble(110, 5), wobble(24, 2))
    verdicts = soakcheck.judge(samples)
    assert all(v["judged"] for v in verdicts) and not soakcheck.leaks(verdicts), soakcheck.table(verdicts, samples)


def test_slope_is_robust_to_one_peak():
    pts = [(t, 10.0 + (500 if t == 20 else 0)) for t in range(0, 60, 2)]
    assert soakcheck.slope_per_min(pts) == 0
