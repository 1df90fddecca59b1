"""Zygotes sharing one GPU take turns at timing (kgharness.zygote.gpupeers): the state machine on
its own, then two real zygotes (CPU mode, one peers key) through the test evaluators."""

import os
import signal
import time
from pathlib import Path

import pytest

from kgharness.zygote import gpupeers
from kgharness.zygote.gpupeers import Peers
from zygote_client import ZygoteClient

TESTS = str(Path(__file__).resolve().parent)
TASK = "import torch\n"


class Clock:
    def __init__(self):
        self.t = 100.0

    def __call__(self):
        return self.t


@pytest.fixture
def pair(tmp_path):
    clock = Clock()
    a, b = Peers("gpu0", str(tmp_path), clock), Peers("gpu0", str(tmp_path), clock)
    yield a, b, clock
    a.close()
    b.close()


def test_alone_a_window_opens_at_once(tmp_path):
    p = Peers("solo", str(tmp_path), Clock())
    assert p.tick(True) == "go" and p.state == Peers.RUNNING
    p.want()
    assert p.tick(True) == ("grant", True) and p.owns()
    p.release()
    assert p.state == Peers.IDLE and p.run_mode is None
    p.want()     # no peer about: the next window opens at once, without a pause for turns
    assert p.tick(True) == ("grant", True)
    p.release()
    assert p.tick(False) is None and p.state == Peers.IDLE
    assert p.poll_s() == gpupeers.ALONE_POLL_S
    p.close()


def test_a_window_waits_until_the_peer_has_stopped(pair):
    a, b, clock = pair
    assert a.tick(True) == "go" and b.tick(True) == "go"
    a.want()
    assert a.tick(True) is None, "b still runs: a must not open its window"
    assert a.poll_s() == gpupeers.POLL_S
    assert b.tick(True) is None, "b, alone so far, looks only every ALONE_POLL_S"
    clock.t += gpupeers.ALONE_POLL_S
    assert b.tick(True) == "stop" and b.yielded() and b.run_mode is None
    assert b.tick(True) == "stop", "b stays stopped while a's window is open"
    assert a.tick(True) == ("grant", True)
    a.release()
    assert b.tick(True) == "go" and b.state == Peers.RUNNING
    assert a.tick(True) == "go"


def test_a_peer_that_wants_while_another_times_waits_stopped(pair):
    a, b, clock = pair
    a.tick(True)
    a.want()
    assert a.tick(True) == ("grant", True)
    b.want()
    assert b.tick(True) == "stop" and not b.owns()
    a.release()
    # b waits (it holds `want`): a's next window waits its turn, b takes the GPU first
    a.want()
    assert a.tick(True) is None
    assert b.tick(True) == ("grant", True)
    clock.t += 1.0
    assert a.tick(True) == "stop"
    b.release()
    clock.t += 1.0
    assert a.tick(True) == ("grant", True)


def test_a_peer_that_never_stops_delays_a_window_only_so_long(pair):
    a, b, clock = pair
    assert b.tick(True) == "go"     # b holds `run` and never polls again
    a.want()
    assert a.tick(True) is None
    clock.t += gpupeers.WAIT_MAX_S + 1
    assert a.tick(True) == ("grant", False)


def test_an_idle_zygote_holds_nothing(pair):
    a, b, _ = pair
    assert b.tick(True) == "go"
    assert b.tick(False) is None and b.run_mode is None
    a.want()
    assert a.tick(True) == ("grant", True)


def test_locks_die_with_their_process(tmp_path):
    a = Peers("gpu0", str(tmp_path), Clock())
    pid = os.fork()
    if pid == 0:
        b = Peers("gpu0", str(tmp_path), Clock())
        b.tick(True)
        b.want()
        b.tick(True)        # b owns the GPU ... and dies holding it
        os._exit(0 if b.owns() else 1)
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 0
    a.want()
    assert a.tick(True) == ("grant", True)
    a.close()


def test_gpu_key_names_the_bus(tmp_path):
    proc = tmp_path / "gpus"
    for bus, uuid in (("0000:1b:00.0", "GPU-aaaa"), ("0000:04:00.0", "GPU-bbbb")):
        (proc / bus).mkdir(parents=True)
        (proc / bus / "information").write_text(f"Model: H200\nGPU UUID: {uuid}\n")
    key = lambda dev, env: gpupeers.gpu_key(dev, env, str(proc))  # noqa: E731
    assert key("cuda:0", {}) == "0000:04:00.0"
    assert key("cuda:0", {"CUDA_VISIBLE_DEVICES": "1"}) == "0000:1b:00.0"
    assert key("cuda:1", {"CUDA_VISIBLE_DEVICES": "0,1"}) == "0000:1b:00.0"
    assert key("cuda:0", {"CUDA_VISIBLE_DEVICES": "GPU-bbbb"}) == "0000:04:00.0"
    assert key("cuda:2", {"CUDA_VISIBLE_DEVICES": "0,1"}) is None
    assert gpupeers.gpu_key("cuda:0", {"CUDA_VISIBLE_DEVICES": "3"}, str(tmp_path / "none")) == "3"


# ---- two zygotes -------------------------------------------------------------------------

@pytest.fixture
def zygotes(tmp_path):
    args = ("--peers-key", "test-gpu", "--peers-dir", str(tmp_path))
    with ZygoteClient(evaluator="zygote_evaluators:evaluate", env={"PYTHONPATH": TESTS}, extra_args=args) as a, \
            ZygoteClient(evaluator="zygote_evaluators:evaluate", env={"PYTHONPATH": TESTS}, extra_args=args) as b:
        yield a, b


def test_two_zygotes_never_time_at_once(zygotes):
    a, b = zygotes
    ids = [(z, z.submit(TASK, "lock 0.3")) for z in (a, b, a, b)]
    vs = [z.wait(i, 60) for z, i in ids]
    assert all(v["status"] == "correct" for v in vs), vs
    assert a.alive() and b.alive()
    spans = sorted(tuple(v["probe"]["lock"]) for v in vs)
    for (a0, a1), (b0, b1) in zip(spans, spans[1:]):
        assert a1 <= b0, spans


def test_a_zygote_stops_its_evaluations_while_a_peer_times(zygotes):
    a, b = zygotes
    busy = b.submit(TASK, "busy 1.6", {"timeout_s": 1.5})   # 1.6 s of work, 1.5 s allowed
    b.started(busy)
    time.sleep(0.3)
    lock = a.submit(TASK, "lock 0.6")
    vl, vb = a.wait(lock, 30), b.wait(busy, 30)
    assert vl["status"] == "correct", vl
    assert vb["status"] == "correct", vb   # the time it spent stopped did not count against it
    l0, l1 = vl["probe"]["lock"]
    ticks = vb["probe"]["ticks"]
    gaps = [(x, y) for x, y in zip(ticks, ticks[1:]) if y - x > 0.3]
    assert any(x <= l0 + 0.05 and y >= l1 - 0.05 for x, y in gaps), (gaps, (l0, l1))


def test_a_dead_zygote_does_not_hold_the_gpu(zygotes):
    a, b = zygotes
    held = a.submit(TASK, "lock 30", {"timeout_s": 60})
    a.started(held)
    time.sleep(0.5)
    t0 = time.monotonic()
    nxt = b.submit(TASK, "lock 0.1", {"timeout_s": 30})
    time.sleep(0.5)
    os.kill(a.proc.pid, signal.SIGKILL)
    v = b.wait(nxt, 30)
    assert v["status"] == "correct", v
    assert time.monotonic() - t0 < 10


def test_a_zygote_is_alone_on_the_gpu_until_another_process_holds_it(tmp_path):
    p = Peers("gpu7", str(tmp_path), Clock())
    assert p.alone_on_gpu() and p.alone_on_gpu()     # asking keeps its own lock
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:   # another zygote's process on the same GPU
        Peers("gpu7", str(tmp_path), Clock())
        os.write(w, b"x")
        time.sleep(60)
        os._exit(0)
    try:
        assert os.read(r, 1) == b"x"
        assert not p.alone_on_gpu()
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    assert p.alone_on_gpu()    # its lock died with it
    p.close()
