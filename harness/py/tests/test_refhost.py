"""Reference hosts (kgharness.zygote.refhosts): a task's reference runner kept warm and
lent to the judge whose timing window is open. The verdicts are the same with hosts on
and off; the first evaluation of a task creates the host and later shared ones borrow
it; a host that dies ends hosting for its task, never an evaluation's verdict; a
borrower reads past what an earlier one left on the channel; admission counts a host
once and a borrower's reservation without a reference.

Real zygotes on the CPU (the interpreter, with cpu_timing so that there is a window)."""
import os
import signal
import tempfile
import time

import pytest

from kgharness import pipe
from kgharness.judge.hostproc import HostProc
from kgharness.judge.reservation import CONTEXT_MB
from kgharness.runner import spawn
from kgharness.zygote import refhosts
from kgharness.zygote.admission import Admission
from test_refshare import ADD, OPTS, SAME, SOFTMAX, WRONG, src
from zygote_client import ZygoteClient

HOSTS_ON = {refhosts.ENV: "on"}


@pytest.fixture(scope="module")
def hosts():
    with ZygoteClient(mode="cpu_interpreter", env=HOSTS_ON) as c:
        yield c
        assert c.alive(), c.log_text()


@pytest.fixture(scope="module")
def plain():
    with ZygoteClient(mode="cpu_interpreter") as c:
        yield c


def host_pids(z):
    """The zygote's reference hosts: its children whose directory is a host's."""
    out = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            cwd = os.readlink(f"/proc/{pid}/cwd")
        except OSError:
            continue
        if ppid == z.proc.pid and "/host-" in cwd:
            out.append(int(pid))
    return out


def test_verdicts_are_the_same_with_hosts_on_and_off(hosts, plain):
    runs = [(ADD, src("cand_add_relu.py")), (ADD, WRONG), (ADD, src("cand_add_relu.py")),
            (SOFTMAX, src("cand_softmax.py")), (SOFTMAX, src("cand_softmax_hardcoded.py")),
            (SOFTMAX, src("cand_softmax.py")), (ADD, src("cand_add_relu.py"))]
    roles = []
    for task, code in runs:
        a, b = hosts.evaluate(task, code, OPTS), plain.evaluate(task, code, OPTS)
        assert {k: a[k] for k in SAME} == {k: b[k] for k in SAME}, (task["name"], a["feedback"], b["feedback"])
        assert "reference_host" not in b["stage_ms"]
        roles.append(a["stage_ms"].get("reference_host"))
        if a["status"] == "correct":
            # Timed in its own window, against the host when it borrowed one.
            assert a["ref_runtime_after"]["iterations"] >= OPTS["min_iters"]
            assert ("window_borrow" in a["stage_ms"]) == (roles[-1] == pipe.ASK_USE)
    # The first evaluation of each task loads its host and uses it as its reference; every
    # later one borrows it (a wrong candidate's asks too, and never reaches a window).
    assert roles == [2, 1, 1, 2, 1, 1, 1]


def test_a_borrower_has_no_reference_runner_of_its_own_at_work(hosts):
    opts = dict(OPTS, seed=21, seeds=12)
    first = hosts.evaluate(ADD, src("cand_add_relu.py"), opts)
    later = hosts.evaluate(ADD, src("cand_add_relu.py"), opts)
    assert first["stage_ms"]["reference_host"] == 2 and later["stage_ms"]["reference_host"] == 1
    assert first["status"] == later["status"] == "correct"
    # Its own reference runner only described the task and was killed before load; the
    # host's CPU is no evaluation's.
    assert later["stage_ms"]["cpu_reference"] > 0 and first["stage_ms"]["cpu_reference"] > 0
    assert "reference_warm" not in later["stage_ms"] and "reference_later" not in later["stage_ms"]


def test_a_host_that_dies_ends_hosting_for_its_task_and_no_verdict_is_lost():
    with ZygoteClient(mode="cpu_interpreter", env=HOSTS_ON) as z:
        opts = dict(OPTS, seed=31)
        assert z.evaluate(ADD, src("cand_add_relu.py"), opts)["stage_ms"]["reference_host"] == 2
        pids = host_pids(z)
        assert len(pids) == 1, pids
        os.kill(pids[0], signal.SIGKILL)
        time.sleep(0.5)
        after = [z.evaluate(ADD, src("cand_add_relu.py"), opts) for _ in range(2)]
        assert [v["status"] for v in after] == ["correct", "correct"], [v["feedback"] for v in after]
        assert all("reference_host" not in v["stage_ms"] for v in after)    # their own references
        assert all(v["reference_shared"] for v in after)
        assert host_pids(z) == []
        assert "exited; its task's evaluations run their own reference" in z.log_text()
        assert z.alive()


def test_a_task_check_and_an_untimed_job_get_no_host():
    with ZygoteClient(mode="cpu_interpreter", env=HOSTS_ON) as z:
        v = z.evaluate(ADD, src("cand_add_relu.py"), dict(OPTS, seed=41, cpu_timing=False))
        assert v["status"] == "correct" and "reference_host" not in v["stage_ms"]
        assert host_pids(z) == []


def test_a_borrower_reads_past_what_an_earlier_one_left_unanswered():
    with tempfile.TemporaryDirectory() as d:
        job = {"task": ADD, "options": {"seed": 0}}
        r = spawn.start("reference", job, "cpu_interpreter", "cpu", d)
        try:
            assert r.ask("load")["held"] == 0
            # An earlier borrower asked twice and was killed before it read the answers.
            r.request("sum", inputs={"seed": 1})
            r.request("sum", inputs={"seed": 2})
            hp = HostProc(os.dup(r.chan.sock.fileno()), r.pid)
            info = hp.hello(timeout=30)
            assert info["loaded"] is True and info["held"] == 0
            # In step from here on: its own request is answered.
            assert hp.ask("sum", inputs={"seed": 3})["in_sum"] is not None
            hp.kill()
            assert r.status is None         # the handle closed, the host lives on
        finally:
            r.kill()


def test_admission_counts_a_host_once_and_a_borrower_without_a_reference():
    granted = []
    adm = Admission(10000, lambda h, mb, alone: granted.append((h, mb)) or True)
    key = "k" * 24
    adm.learned[key], adm.learned_ref[key] = 4000.0, 1500.0
    adm.host(key, 1500 * 1.15 + CONTEXT_MB)
    assert adm.used() == pytest.approx(1500 * 1.15 + CONTEXT_MB)
    a, b = object(), object()
    need = adm.need(key, 0)
    adm.request(a, need, key=key, without=adm.hosted(key, 999))     # learned_ref wins over 999
    assert adm.held[a] == pytest.approx(need - 1500 * 1.15 - CONTEXT_MB)
    adm.request(b, need, key=key)                                   # admitted whole, then borrows
    adm.less(b, adm.hosted(key, 999))
    assert adm.held[b] == pytest.approx(adm.held[a])
    adm.measured(key, 5000.0)                                       # a larger measure: still without
    assert adm.held[a] == pytest.approx(adm.held[b]) and adm.held[a] < adm.need(key, 0)
    adm.host(key, 0)
    adm.release(a)
    adm.release(b)
    assert adm.used() == 0 and not adm.without


def test_members_that_asked_before_their_host_was_ready_are_granted_without_their_reference():
    granted = []
    adm = Admission(12000, lambda h, mb, alone: granted.append((h, mb)) or True)
    key, hkey = "k" * 24, "h" * 24
    adm.learned[key], adm.learned_ref[key] = 4000.0, 1500.0
    need, part = adm.need(key, 0), adm.hosted(key, 999)       # 4600, of which the host's 2365
    big, a, b, c = object(), object(), object(), object()
    adm.request(big, 5000)
    adm.request(a, need, key=key, host=hkey, hosted=part)      # no host ready: the whole fits
    assert a in adm.held and not adm.owes(a)
    adm.request(b, need, key=key, host=hkey, hosted=part)      # whole: waits
    adm.request(c, need, key=key, host=hkey, hosted=part)
    adm.host(hkey, part)                                       # ready, and counted once
    assert b not in adm.held and adm.used() == pytest.approx(5000 + need + part)
    adm.release(big)                                           # whole, only b would fit; without
    assert adm.owes(b) and adm.owes(c)                         # the host's part, both do
    assert granted[-2:] == [(b, pytest.approx(need - part)), (c, pytest.approx(need - part))]
    adm.less(b, part)                                          # b borrowed the host: its debt is gone
    assert not adm.owes(b) and adm.held[b] == pytest.approx(need - part)
    adm.host(hkey, 0)                                          # the host went away before c borrowed
    adm.more(c)                                                # c brings its reference in after all
    assert not adm.owes(c) and adm.held[c] == pytest.approx(need)
    for h in (a, b, c):
        adm.release(h)
    assert adm.used() == 0 and not adm.backed and not adm.owed


def test_a_judge_that_inherited_a_host_not_ready_names_its_reference_share():
    """The judge's side of the above (GPU only, so run here on its own): it asks with
    host_mb when it inherited a host and was told none before admission, never when it
    creates the host or inherited none."""
    import types

    from kgharness.judge import context, flow, reservation
    from kgharness.judge.devicememory import DeviceMemory

    class Ctx(context.Context):
        def __init__(self, host, owed):
            self.host, self.owed, self.asked = host, owed, []

        def inherits_host(self):
            return self.host

        def reserve_first(self, mb, later, host_mb=0.0):
            self.asked.append(("first", later, host_mb))
            return mb, False, self.owed

        def reserve(self, mb, contexts=False):
            self.asked.append(("whole",))
            return mb, False

    info = {"input_bytes": 3 << 30, "param_bytes": 0, "output_bytes": 1 << 30}
    ref = reservation.quotas_mb(info)["reference"]
    got = {}
    for name, host, role, share in (("not ready", True, pipe.ASK_NONE, False),
                                    ("not ready, shared", True, pipe.ASK_NONE, True),
                                    ("creates it", True, pipe.ASK_CREATE, False),
                                    ("none", False, pipe.ASK_NONE, False)):
        j = object.__new__(flow.Judge)
        j.gpu, j.stage_name = True, None
        j.sharing = types.SimpleNamespace(host_role=role, hosted=False)
        j.memory = DeviceMemory(j)
        j.verdict = {"stage_ms": {}}
        j.ctx = Ctx(host, owed=host and not role)
        j.memory.admit(check=False, info=info, share=share)
        got[name] = (j.ctx.asked, j.memory.owed, j.verdict["stage_ms"].get("reference_owed"))
    assert got["not ready"] == ([("first", 0.0, ref)], True, 1)
    assert got["not ready, shared"] == ([("first", ref, ref)], True, 1)
    assert got["creates it"] == ([("whole",)], False, None)
    assert got["none"] == ([("whole",)], False, None)


def test_hosts_nobody_uses_are_retired_and_one_over_its_limits_ends_its_task_hosting():
    import socket
    import subprocess
    now = [0.0]
    adm = Admission(10000, lambda h, mb, alone: True)
    hs = refhosts.Hosts("gpu", "cuda:0", "/nonexistent", mem=adm, clock=lambda: now[0])
    procs = [subprocess.Popen(["sleep", "60"], start_new_session=True) for _ in range(3)]
    try:
        made = []
        for i, p in enumerate(procs):
            h = refhosts.Host(f"key{i}", p.pid, socket.socket(), now[0])
            h.state, h.mb = "ready", 100.0
            hs.by_key[h.key], hs.by_pid[h.pid] = h, h
            adm.host(h.key, h.mb)
            made.append(h)
        user = object()
        made[0].users.add(user)                      # in use: never retired for idleness or memory
        groups = {made[2].pid: ({made[2].pid}, 64 << 30)}   # 64 GiB of host memory
        now[0] = 5.0
        hs.tick(now[0], False, groups, (64, 32 << 30))
        assert made[2].state == "gone" and "key2" in hs.banned     # over its limits: hosting ends
        assert made[1].state == "ready"
        hs.tick(now[0], True, {}, (64, 32 << 30))                   # memory wanted: the unused one goes
        assert made[1].state == "gone" and "key1" not in hs.banned
        now[0] = refhosts.HOST_IDLE_S + 10
        hs.tick(now[0], True, {}, (64, 32 << 30))
        assert made[0].state == "ready" and adm.used() == 100.0
        for p in procs[1:]:
            assert p.wait(timeout=5) == -signal.SIGKILL
        hs.finished(user, made[0])                                  # its last user ends: idle from now
        now[0] += refhosts.HOST_IDLE_S + 1
        hs.tick(now[0], False, {}, (64, 32 << 30))
        assert made[0].state == "gone" and adm.used() == 0
    finally:
        for p in procs:
            p.kill()


def test_hosts_are_on_by_default_on_a_gpu_and_need_sharing(monkeypatch):
    monkeypatch.delenv(refhosts.ENV, raising=False)
    assert refhosts.enabled("gpu", 8192) and not refhosts.enabled("cpu_interpreter", 1024)
    monkeypatch.setenv(refhosts.ENV, "on")
    assert refhosts.enabled("gpu", 8192) and refhosts.enabled("cpu_interpreter", 1024)
    assert not refhosts.enabled("gpu", 0)          # no store: nothing shared to borrow for
    monkeypatch.setenv(refhosts.ENV, "off")
    assert not refhosts.enabled("gpu", 8192) and not refhosts.enabled("cpu_interpreter", 1024)
