"""The zygote as Go sees it: fd 3/4 records, one result per eval, survival.

Uses the scripted evaluator in zygote_evaluators.py (job["code"] is a command),
so these tests do not depend on the judge (kgharness.judge).
"""

import os
import random
import time
from pathlib import Path

import pytest

from kgharness import PROTOCOL
from zygote_client import ZygoteClient

TESTS = str(Path(__file__).resolve().parent)
EVALUATOR = "zygote_evaluators:evaluate"
TASK = "import torch\n"


def start(env=None, **kw):
    return ZygoteClient(evaluator=EVALUATOR, env={"PYTHONPATH": TESTS, **(env or {})}, **kw)


@pytest.fixture(scope="module")
def z():
    with start() as client:
        yield client
        assert client.alive(), client.log_text()


def poll_until(pred, timeout, every=0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(every)
    return pred()


def test_hello(z):
    h = z.hello
    assert h["v"] == 1 and h["protocol"] == PROTOCOL and h["mode"] == "cpu_interpreter"
    assert h["device"] == "cpu" and h["torch"] and h["triton"] and h["python"]
    assert set(h["sandbox"]) >= {"netns", "landlock", "rlimits", "level", "detail"}
    assert h["sandbox"]["level"] in ("full", "partial")


def test_normal_job(z):
    rid = z.submit(TASK, "ok")
    started = z.started(rid)
    v = z.wait(rid, 30)
    assert v["status"] == "correct", v
    assert v["stage_ms"]["fork"] > 0
    p = v["probe"]
    assert p["pid"] == started["pid"] == p["pgid"]          # own process group
    assert p["cwd"] == p["tmpdir"] and os.path.basename(p["tmpdir"]).startswith("job-")
    assert p["env"]["HOME"] == p["env"]["TMPDIR"] == p["tmpdir"]
    assert poll_until(lambda: not os.path.exists(p["tmpdir"]), 5)   # temp dir removed


def test_triton_kernel_runs_in_sandboxed_child(z):
    v = z.evaluate(TASK, "triton", {"timeout_s": 60})
    assert v["status"] == "correct" and v["probe"]["total"] == 1000.0, v


@pytest.mark.skipif(not os.environ.get("KERNELGATE_TEST_GPU"), reason="set KERNELGATE_TEST_GPU=1 on a GPU host")
def test_gpu_mode_smoke(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("key")
    with ZygoteClient(mode="gpu", evaluator=EVALUATOR,
                      env={"PYTHONPATH": TESTS, "KERNELGATE_DATA_DIR": str(tmp_path)}) as c:
        print("hello", c.hello)
        assert c.hello["device"] == "cuda:0"
        for _ in range(3):
            v = c.evaluate(TASK, "triton", {"timeout_s": 120})
            print("triton", v["status"], v["stage_ms"], v.get("probe"), v["feedback"], v["output_tail"])
            assert v["status"] == "correct", v
        p = c.evaluate(TASK, f"read {secret}")["probe"]
        print("read", p)
        assert c.hello["sandbox"]["landlock"] is False or p[str(secret)].startswith("error")
        v = c.evaluate(TASK, "segv")
        assert v["status"] == "harness_error", v     # a dead judge, as in CPU mode below
        ids = [c.submit(TASK, "lock 0.3") for _ in range(2)]
        spans = sorted(tuple(c.wait(i, 60)["probe"]["lock"]) for i in ids)
        assert spans[0][1] <= spans[1][0]


# The judge runs no foreign code: a judge that dies without a verdict is the harness's
# failure, never the candidate's success (candidate processes that die are the runners':
# see test_hacks.py's exit and crash fixtures).
def test_a_dead_judge_is_a_harness_error(z):
    v = z.evaluate(TASK, "segv", {"timeout_s": 20})
    assert v["status"] == "harness_error", v
    assert "SIGSEGV without a verdict during stage correctness" in v["feedback"]
    assert "--- output tail ---" in v["feedback"] and "torch._C" in v["feedback"]   # faulthandler, captured
    v = z.evaluate(TASK, "abort", {"timeout_s": 20})
    assert v["status"] == "harness_error" and "SIGABRT" in v["feedback"]


def test_a_judge_that_exits_without_a_verdict_is_a_harness_error(z):
    for cmd, what in (("exit0", "code 0"), ("sysexit", "SystemExit"), ("exit3", "code 3")):
        v = z.evaluate(TASK, cmd, {"timeout_s": 20})
        assert v["status"] == "harness_error" and what in v["feedback"], (cmd, v)
        assert not v["correct"] and v["hack_flags"] == []
    v = z.evaluate(TASK, "raise", {"timeout_s": 20})
    assert v["status"] == "harness_error" and "evaluator bug" in v["feedback"]


def test_hang_times_out_and_next_job_works(z):
    t0 = time.monotonic()
    v = z.evaluate(TASK, "hang timing", {"timeout_s": 1.5}, timeout=20)
    took = time.monotonic() - t0
    assert v["status"] == "timeout", v
    assert "during stage timing" in v["feedback"]
    assert 1.5 <= took < 1.5 + 1.0, took
    # The zygote's log says what the evaluation's processes were doing (state, wchan).
    assert poll_until(lambda: "timeout in stage timing: " in z.log_text(), 5), z.log_text()[-2000:]
    assert z.evaluate(TASK, "ok")["status"] == "correct"


def test_task_check_killed_child_names_the_task_failure(z):
    # A reference that hangs in a task check (protocol 1.1): the zygote's timeout
    # verdict carries a task_error, as every failed task check does.
    z.send({"v": 1, "type": "eval", "id": "taskcheck-1", "job": {
        "task": z.make_task(TASK), "code": "hang reference", "options": {"timeout_s": 1},
        "task_check": True}})
    v = z.wait("taskcheck-1", 20)
    assert v["status"] == "timeout", v
    assert v["task_error"].startswith("the reference failed the task check (timeout): "), v["task_error"]
    assert "stage reference" in v["task_error"]
    plain = z.evaluate(TASK, "hang reference", {"timeout_s": 1}, timeout=20)
    assert plain["status"] == "timeout" and plain["task_error"] == ""


def test_printing_gigabytes_is_capped(z):
    v = z.evaluate(TASK, "print 2000000000", {"timeout_s": 30, "output_limit_bytes": 1 << 20})
    assert v["status"] == "resource_limit", v
    assert "stdout/stderr exceeded" in v["feedback"] and "capped" in v["feedback"]
    assert len(v["output_tail"].encode()) <= 2048
    assert z.evaluate(TASK, "ok")["status"] == "correct"


def test_memory_hog_is_resource_limit(z):
    v = z.evaluate(TASK, "memhog 3000", {"timeout_s": 30, "memory_limit_mb": 300})
    assert v["status"] == "resource_limit", v
    assert "the candidate's processes used" in v["feedback"] and "host memory" in v["feedback"]


def test_a_reference_memory_hog_is_a_task_error(z):
    v = z.evaluate(TASK, "memhog 3000 reference", {"timeout_s": 30, "memory_limit_mb": 300})
    assert v["status"] == "harness_error", v
    assert "the reference's processes used" in v["task_error"]


def test_fork_bomb_is_killed(z):
    v = z.evaluate(TASK, "forkbomb 150", {"timeout_s": 30})
    assert v["status"] == "resource_limit", v
    assert "processes" in v["feedback"]
    pids = [int(line.split()[1]) for line in v["output_tail"].splitlines()
            if line.startswith("PID ") and len(line.split()) == 2]
    assert pids, v["output_tail"]
    # every process of the bomb dies, the one that setsid()'d included
    assert poll_until(lambda: not any(os.path.exists(f"/proc/{p}") for p in pids), 5), \
        [p for p in pids if os.path.exists(f"/proc/{p}")]
    assert z.alive() and z.evaluate(TASK, "ok")["status"] == "correct"


def test_timing_lock_is_exclusive_and_holds_the_others_back(z):
    ids = [z.submit(TASK, "lock 0.6") for _ in range(3)]
    vs = [z.wait(i, 30) for i in ids]
    assert all(v["status"] == "correct" for v in vs), vs
    spans = sorted(tuple(v["probe"]["lock"]) for v in vs)
    for (a0, a1), (b0, b1) in zip(spans, spans[1:]):
        assert a1 <= b0, spans                       # never two holders at once
    # A later job was held back for a holder's window: waiting for the lock if it had
    # asked before the grant, stopped (lock_frozen) if it had not asked yet. Which of
    # the two depends on how fast the zygote forked the three (FIFO order itself is
    # test_gpulock's), so the test asserts their sum.
    held = [v["probe"]["waited"] + v["stage_ms"].get("lock_frozen", 0) / 1e3 for v in vs]
    assert max(held) > 0.5, (held, [v["stage_ms"] for v in vs])


def test_other_evaluations_are_stopped_while_one_is_timed(z):
    busy = z.submit(TASK, "busy 1.6", {"timeout_s": 1.5})   # 1.6 s of work, 1.5 s allowed
    z.started(busy)
    time.sleep(0.3)
    lock = z.submit(TASK, "lock 0.6")
    vl, vb = z.wait(lock, 30), z.wait(busy, 30)
    assert vl["status"] == "correct", vl
    # the busy evaluation made no progress while the other held the lock ...
    l0, l1 = vl["probe"]["lock"]
    ticks = vb["probe"]["ticks"] if vb["status"] == "correct" else []
    assert ticks, vb
    gaps = [(a, b) for a, b in zip(ticks, ticks[1:]) if b - a > 0.3]
    assert any(a <= l0 + 0.05 and b >= l1 - 0.05 for a, b in gaps), (gaps, (l0, l1))
    # ... and the time it spent stopped did not count against its timeout
    assert vb["status"] == "correct"
    # Its verdict says how long it was stopped; the holder's says nothing of the kind.
    assert 0.5 <= vb["stage_ms"]["lock_frozen"] / 1e3 <= 0.6 + 1.0, vb["stage_ms"]
    assert "lock_frozen" not in vl["stage_ms"], vl["stage_ms"]


@pytest.mark.parametrize("through", ["on", "off"])
def test_an_evaluation_compiling_ahead_runs_through_a_window_and_stops_when_it_is_done(through):
    # The candidate's compile-only child works through another evaluation's window
    # (kgharness.runner.precompile); back from it, the evaluation stops until the window closes.
    with start(env={"KERNELGATE_PRECOMPILE_IN_WINDOWS": through}) as zz:
        ahead = zz.submit(TASK, "ahead 1.6 0.5")
        zz.started(ahead)
        time.sleep(0.3)
        lock = zz.submit(TASK, "lock 1.8")
        vl, va = zz.wait(lock, 30), zz.wait(ahead, 30)
        assert vl["status"] == "correct" and va["status"] == "correct", (vl, va)
        l0, l1 = vl["probe"]["lock"]
        p = va["probe"]
        inside = [t for t in p["ticks"] if l0 + 0.05 < t < l1 - 0.05]
        if through == "on":
            gaps = [(a, b) for a, b in zip(p["ticks"], p["ticks"][1:]) if b - a > 0.3]
            assert len(inside) > 30 and not gaps, (len(inside), gaps, (l0, l1))
            assert l0 < p["ask"] < l1 - 0.2, (p["ask"], l0, l1)   # done compiling inside the window ...
            assert p["back"] >= l1 - 0.05, (p["back"], l1)      # ... and held until it closed
        else:
            assert not inside, (len(inside), (l0, l1))          # stopped with the rest
        assert va["stage_ms"].get("lock_frozen", 0) / 1e3 >= 0.1, va["stage_ms"]


def test_compiling_ahead_and_windows_interleaved_at_random_never_hang():
    # The precompile stage, its check-in and other evaluations' windows in every order
    # the zygote's loop can see them: each evaluation ends, none by its timeout.
    rnd = random.Random(7)
    with start() as zz:
        ids = []
        for _ in range(150):
            cmd = rnd.choice([f"ahead {rnd.uniform(0, 0.05):.3f} {rnd.uniform(0, 0.02):.3f}",
                              f"lock {rnd.uniform(0.002, 0.03):.3f}"])
            ids.append(zz.submit(TASK, cmd, {"timeout_s": 20}))
            time.sleep(rnd.uniform(0, 0.005))
        vs = [zz.wait(i, 60) for i in ids]
        assert [v["status"] for v in vs] == ["correct"] * len(ids), [v for v in vs if v["status"] != "correct"][:3]


def test_runners_see_the_trusted_triton_cache_read_only_through_the_private_tmp(tmp_path):
    # It lives under the host's /tmp, which a judge's private tmpfs hides; what the zygote
    # adds later (kgharness.runner.launchers renames entries in) shows too.
    trusted = tmp_path / "trusted-triton-cache"
    (trusted / "k1").mkdir(parents=True)
    with start(env={"KERNELGATE_TRUSTED_TRITON_CACHE": str(trusted)}) as zz:
        v = zz.evaluate(TASK, "trusted")
        assert v["probe"]["mountns"] is True, v        # the tmpfs is there ...
        assert v["probe"]["seen"] == ["k1"], v         # ... and the cache shows through it
        assert v["probe"]["write"].startswith("error"), v
        (trusted / "k2").mkdir()
        assert zz.evaluate(TASK, "trusted")["probe"]["seen"] == ["k1", "k2"]
    assert sorted(os.listdir(trusted)) == ["k1", "k2"]


def test_a_process_left_stopped_outside_a_window_is_continued(z):
    # A stop and a continue sent while a process forks leave its child stopped (Linux);
    # a self-stopped child stands for it here. Inside its own window, where the judge
    # stops its runners, nothing is continued.
    v = z.evaluate(TASK, "selfstop")
    p = v["probe"]
    assert p["continued"] is True and p["waited"] < 2.0, p
    assert p["held"] == "T", p
    assert "left stopped" in z.log_text()


def test_nested_lock_request_fails_fast(z):
    t0 = time.monotonic()
    v = z.evaluate(TASK, "nested", {"timeout_s": 30})
    assert v["status"] == "harness_error" and "timing lock requested twice" in v["feedback"], v
    assert time.monotonic() - t0 < 10


def test_forged_verdict_is_not_accepted(z):
    v = z.evaluate(TASK, "forge")
    assert v["status"] == "harness_error" and not v["correct"], v
    assert "nonce" in v["feedback"]


def test_lock_wait_does_not_count_against_timeout(z):
    a = z.submit(TASK, "lock 2.0", {"timeout_s": 10})
    z.started(a)
    time.sleep(0.3)   # let a take the lock first (ordering, not synchronisation)
    b = z.submit(TASK, "lock 0.1", {"timeout_s": 1.5})
    vb, va = z.wait(b, 20), z.wait(a, 20)
    assert vb["status"] == "correct" and va["status"] == "correct", vb
    # b waited (stopped, or queued for the lock) for all of a's 2 s, with a 1.5 s timeout
    assert vb["probe"]["lock"][0] >= va["probe"]["lock"][1]


def test_dead_lock_holder_releases_lock(z):
    a = z.submit(TASK, "lockdie 0.3", {"timeout_s": 10})
    z.started(a)
    b = z.submit(TASK, "lock 0.1", {"timeout_s": 10})
    va, vb = z.wait(a, 20), z.wait(b, 20)
    assert va["status"] == "harness_error" and "SIGKILL" in va["feedback"]
    assert vb["status"] == "correct", vb


def test_garbage_on_fd3_gets_error_and_service_continues(z):
    n = len(z.errors)
    z.send_raw(b"this is not json\n")
    z.send_raw(b'{"v":99,"type":"eval","id":"future","job":{"code":""}}\n')
    z.send_raw(b'{"v":1,"type":"bogus"}\n')
    assert poll_until(lambda: len(z.errors) >= n + 3, 10)
    errs = z.errors[n:]
    assert errs[0]["message"] == "record is not valid JSON"
    assert errs[1]["id"] == "future" and "major version" in errs[1]["message"]
    assert z.evaluate(TASK, "ok")["status"] == "correct"


def test_duplicate_id_is_refused(z):
    rid = z.submit(TASK, "lock 0.5", id="dup-1")
    z.started(rid)
    z.submit(TASK, "ok", id="dup-1")
    assert poll_until(lambda: any(e.get("id") == "dup-1" for e in z.errors), 10)
    assert z.wait(rid, 20)["status"] == "correct"
    assert sum(1 for r in z.records if r["type"] == "result" and r["id"] == "dup-1") == 1


def test_shutdown_with_child_in_flight():
    with start() as c:
        rid = c.submit(TASK, "hang", {"timeout_s": 60})
        c.started(rid)
        code = c.close()
        assert code == 0, c.log_text()
        v = c.wait(rid, 5)
        assert v["status"] == "harness_error" and "shut down" in v["feedback"]


def test_eof_on_fd3_is_shutdown():
    c = start()
    rid = c.submit(TASK, "hang", {"timeout_s": 60})
    c.started(rid)
    os.close(c._to_z)
    assert c.proc.wait(20) == 0
    assert c.wait(rid, 5)["status"] == "harness_error"
    c.close()


def test_missing_evaluator_gives_harness_error():
    with ZygoteClient(evaluator="no_such_module:evaluate") as c:
        v = c.evaluate(TASK, "ok", {"timeout_s": 20})
        assert v["status"] == "harness_error" and "could not be loaded" in v["feedback"]


def test_prewarm_caches_host_state_without_initialising_cuda():
    """What prewarm_host_state leaves for every fork to share; CUDA must stay untouched,
    or no child could use the GPU."""
    import torch
    from triton.runtime.cache import triton_key

    from kgharness.zygote.startup import prewarm_host_state

    prewarm_host_state()
    assert triton_key.cache_info().currsize == 1
    assert ("_triton_bsr_dense_mm_out", "SparseCsrCUDA") in torch._TritonLibrary.ops_table
    assert not torch.cuda.is_initialized()


def test_a_starting_zygote_removes_the_bases_dead_zygotes_left(tmp_path):
    """A killed zygote cannot remove its base (kgharness.zygote.basedir): the next zygote with the
    same parent does, and leaves alone a base whose lock is held, one without a lock file,
    and anything not named like a base."""
    import fcntl
    base = tmp_path / "bases"
    base.mkdir()
    stale, held, unlocked, other = (base / n for n in ("kgz-99999-stale", "kgz-99998-held", "kgz-99997-old",
                                                      "kgz-notabase"))
    for d in (stale, held, unlocked, other):
        (d / "job-x").mkdir(parents=True)
        (d / "job-x" / "kernel.py").write_text("x = 1\n")
    for d in (stale, held, other):
        (d / ".alive").write_text("")
    lock = os.open(held / ".alive", os.O_RDWR)
    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)      # a live zygote's, as far as the sweep can tell
    try:
        first = start(tmp_base=str(base))
        own = next(base.glob(f"kgz-{first.hello['pid']}-*"))
        assert not stale.exists() and held.exists() and unlocked.exists() and other.exists()
        assert own.exists() and first.evaluate(TASK, "ok")["status"] == "correct"
        first.proc.kill()                                  # no shutdown: its base stays behind
        first.proc.wait(30)
        first.close()
        assert own.exists()
        with start(tmp_base=str(base)) as second:
            assert not own.exists(), "the killed zygote's base is still there"
            assert held.exists() and unlocked.exists() and other.exists()
            assert second.evaluate(TASK, "ok")["status"] == "correct"
        assert not list(base.glob(f"kgz-{second.hello['pid']}-*"))   # its own, removed at shutdown
    finally:
        os.close(lock)
