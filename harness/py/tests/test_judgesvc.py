"""The judge service (kgharness.zygote.judgesvc) as a judge sees it: a real forked service on a
CPU, its operations over memfd buffers, its gate while one judge holds the timing window,
and buffers that die with their judge's connection."""

import mmap
import os
import threading
import time

# A CPU module: its imports load Triton, and Triton reads this once. Without it, the
# test_eval_* modules run after this one in the same process got a compiled Triton on a
# machine without a GPU (test_hardcoded_shape_fails_held_out: runtime_error).
os.environ["TRITON_INTERPRET"] = "1"

import pytest  # noqa: E402
import torch  # noqa: E402

from kgharness import exchange  # noqa: E402
from kgharness.judge import bufferops  # noqa: E402
from kgharness.zygote import judgesvc  # noqa: E402

SPEC = [{"kind": "tensor", "dtype": "float32", "shape": [4, 8], "device": "cpu"}]


@pytest.fixture(scope="module")
def svc():
    s = judgesvc.Service("cpu_interpreter", "cpu")
    s.start()
    yield s
    s.stop()
    os.waitpid(s.pid, 0)


def lend(ops, values):
    """A buffer in the service, written through its memfd as a runner would."""
    _, size = exchange.layout(SPEC)
    bid, handle, fds = ops.alloc(size)
    assert handle == {"kind": "memfd", "size": size} and len(fds) == 1
    view = torch.frombuffer(mmap.mmap(fds[0], size), dtype=torch.uint8)
    os.close(fds[0])
    bufferops.leaves(view, SPEC)[0].copy_(values)
    return bid, view


def test_operations_agree_with_the_local_ones(svc):
    ops = bufferops.Remote(svc.connect())
    x = torch.randn(4, 8)
    a, _ = lend(ops, x)
    b, view_b = lend(ops, x + 1e-6)
    tol = ops.tolerance(a, SPEC)
    assert tol["atol"] == 1e-4 and tol["dtype"] == "float32"
    assert ops.compare(b, SPEC, a, SPEC, tol)["ok"]
    before = ops.fingerprint(b)
    bufferops.leaves(view_b, SPEC)[0][0, 0] += 1.0     # a late write is seen
    assert ops.fingerprint(b) != before
    res = ops.compare(b, SPEC, a, SPEC, tol)
    assert not res["ok"] and res["max_abs"] == pytest.approx(1.0, abs=1e-3)
    bufferops.leaves(view_b, SPEC)[0].fill_(float("inf"))
    assert ops.nonfinite(b, SPEC) and not ops.nonfinite(a, SPEC)
    assert ops.compare(b, SPEC, a, SPEC, tol)["max_abs"] == float("inf")   # null over JSON
    snap = ops.snapshot(a, SPEC)
    assert not ops.differ(snap, a, SPEC, tol)
    assert ops.held_bytes() >= 3 * 4 * 8 * 4
    assert ops.drain() == [0.0, True] and ops.bandwidth() is None
    ops.close()


def test_a_judge_reads_the_reference_alone_figure_another_published_after_it_started():
    """A judge that took its task's entry before any window of the task had closed (or
    none at all) asks for the figure when its own window opens (kgharness.judge.window)."""
    s = judgesvc.Service("cpu_interpreter", "cpu", share_bytes=1 << 20)
    s.start()
    try:
        first, later = bufferops.Remote(s.connect()), bufferops.Remote(s.connect())
        assert later.before("k") == {"before": None}                   # nothing published
        a, _ = lend(first, torch.randn(4, 8))
        assert first.share("k", {"spec": SPEC}, [first.snapshot(a, SPEC)], [])["taken"]
        assert later.before("k") == {"before": None}                   # no window closed yet
        assert first.share_before("k", {"median_ms": 2.5}) is True
        assert later.before("k") == {"before": {"median_ms": 2.5}}
        assert later.before("other") == {"before": None}
        first.close()
        later.close()
    finally:
        s.stop()
        os.waitpid(s.pid, 0)


def test_checks_sums_before_and_after_one_comparison_in_one_request(svc):
    """A correctness call's checks (trials.candidate_result): its buffer's checksum, the
    comparison, the checksum again, read together: the same figures as three requests."""
    ops = bufferops.Remote(svc.connect())
    x = torch.randn(4, 8)
    a, _ = lend(ops, x)
    b, view_b = lend(ops, x * 1.5)
    tol = ops.tolerance(a, SPEC)
    got = ops.checks([b, a], compare=(b, SPEC, a, SPEC, tol), after=[b])
    assert got["fps"] == [ops.fingerprint(b), ops.fingerprint(a)] and got["after"] == [ops.fingerprint(b)]
    assert got["compare"] == ops.compare(b, SPEC, a, SPEC, tol) and not got["compare"]["ok"]
    bufferops.leaves(view_b, SPEC)[0][1, 2] += 1.0
    assert ops.checks([], after=[b])["after"] != got["after"]     # a changed buffer sums otherwise
    assert ops.checks([a]) == {"fps": [ops.fingerprint(a)], "compare": None, "after": []}
    with pytest.raises(bufferops.OpError, match="no buffer"):
        ops.checks([a], after=[10 ** 6])
    ops.close()


def test_an_unknown_or_bad_request_is_an_error_not_a_crash(svc):
    ops = bufferops.Remote(svc.connect())
    with pytest.raises(bufferops.OpError, match="unknown request"):
        ops._ask("exec", "print(1)")
    with pytest.raises(bufferops.OpError, match="no buffer"):
        ops.fingerprint(12345)
    assert ops.info() == {}        # the connection still works
    ops.close()


def test_other_judges_wait_while_one_holds_the_window(svc):
    holder, other = bufferops.Remote(svc.connect()), bufferops.Remote(svc.connect())
    a, _ = lend(holder, torch.ones(4, 8))
    b, _ = lend(other, torch.ones(4, 8))
    holder.window(True)
    done = []
    t = threading.Thread(target=lambda: done.append(other.fingerprint(b)))
    t.start()
    time.sleep(0.3)
    assert not done                             # held off
    assert isinstance(holder.fingerprint(a), int)   # the holder's own requests run
    holder.window(False)
    t.join(5)
    assert done and done[0] == holder.fingerprint(a)
    holder.close()
    other.close()


def test_a_closed_connection_releases_the_window_and_the_buffers(svc):
    holder, other = bufferops.Remote(svc.connect()), bufferops.Remote(svc.connect())
    lend(holder, torch.zeros(4, 8))
    holder.window(True)
    holder.close()                              # the judge died inside its window
    assert other.info() == {}                   # answered: the gate was released
    other.close()
    late = bufferops.Remote(svc.connect())
    assert late.held_bytes() == 0               # a new judge starts with nothing
    late.close()


def test_the_zygote_restarts_a_dead_service(tmp_path):
    import re
    import signal
    from pathlib import Path

    from zygote_client import ZygoteClient
    ci = Path(__file__).resolve().parents[3] / "datasets"
    task = (ci / "ci" / "1_add_relu.py").read_text()
    code = (ci / "solutions" / "ci" / "1_add_relu.py").read_text()
    with ZygoteClient() as z:
        first = re.search(r"judge service started \(pid (\d+)\)", z.log_text())
        assert first, z.log_text()
        os.kill(int(first.group(1)), signal.SIGKILL)
        deadline = time.monotonic() + 10
        while "restarting it" not in z.log_text() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert "restarting it" in z.log_text(), z.log_text()
        v = z.wait(z.submit(task, code), 120)
        assert v["status"] == "correct", v
        assert z.alive()


def test_the_seed_mean_is_summed_and_compared_chunk_by_chunk(monkeypatch):
    """accumulate and mean_within work a chunk at a time (no float32 copy of a whole output
    in the service) and answer what whole-tensor arithmetic answers: chunks of 7 elements
    over outputs of 32, a mean within tolerance and one element off."""
    from kgharness import correctness
    monkeypatch.setattr(correctness, "CHUNK", 7)
    ops = bufferops.Local("cpu_interpreter", "cpu")
    g = torch.Generator().manual_seed(2)
    seeds = [torch.randn(4, 8, generator=g) * 1e-3 + 5.0 for _ in range(3)]
    ids, acc = [], None
    for x in seeds:
        bid, _ = _local_lend(ops, x)
        ids.append(bid)
        acc = ops.accumulate(acc, bid, SPEC)
    whole = sum(x.float() for x in seeds)
    assert torch.equal(ops.kept[acc][0], whole)
    tol = {"atol": 1e-2, "rtol": 1e-2}
    assert all(ops.mean_within(acc, 3, bid, SPEC, tol) for bid in ids)
    off = seeds[0].clone()
    off[3, 5] += 1.0
    bid, _ = _local_lend(ops, off)
    assert not ops.mean_within(acc, 3, bid, SPEC, tol)
    ops.close()


def _local_lend(ops, values):
    _, size = exchange.layout(SPEC)
    bid, handle, fds = ops.alloc(size)
    view = torch.frombuffer(mmap.mmap(fds[0], size), dtype=torch.uint8)
    os.close(fds[0])
    bufferops.leaves(view, SPEC)[0].copy_(values)
    return bid, view
