"""The /proc wall (kgharness.sandbox.procfs): a runner lists itself and what it forks, never
another process, so no other process's command line (the gateway's flags) is readable.

As root the runner mounts a hidepid procfs of its own; without root the judge forks it
into a PID namespace of its own. Both are checked from a forked child, as
test_sandbox_walls does; the real zygote's runners are checked in test_environment.py.
"""

import json
import os
import subprocess
import sys
import time

import pytest

from kgharness.sandbox import mounts, procfs, walls
from test_sandbox_walls import attempt, evaldir, fork_run, in_sandbox, need, outside  # noqa: F401

CANARY = f"kgcanary-{os.getpid()}-{time.monotonic_ns()}"


@pytest.fixture
def bystander():
    """A process outside every sandbox with a secret on its command line."""
    p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)", CANARY])
    deadline = time.monotonic() + 30
    while CANARY.encode() not in open(f"/proc/{p.pid}/cmdline", "rb").read():   # exec'd yet?
        assert time.monotonic() < deadline, "the bystander never started"
        time.sleep(0.01)
    yield p
    p.kill()
    p.wait()


def look():
    """What /proc shows: the pids listed, and any command line naming the canary."""
    pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
    leaked = []
    for p in pids:
        try:
            with open(f"/proc/{p}/cmdline", "rb") as f:
                if CANARY.encode() in f.read():
                    leaked.append(p)
        except OSError:
            pass
    return {"pids": pids, "self": int(os.readlink("/proc/self")), "leaked": leaked}


def look_with_a_child():
    """look() from this process while a child it forked sleeps: the child is listed too."""
    pid = os.fork()
    if pid == 0:
        time.sleep(30)
        os._exit(0)
    try:
        seen = look()
        seen["child_listed"] = any(p != seen["self"] for p in seen["pids"])
        seen["cpuinfo"] = attempt(lambda: len(open("/proc/cpuinfo").read()) > 0)
        seen["status"] = attempt(lambda: "VmRSS" in open("/proc/self/status").read())
        return seen
    finally:
        os.kill(pid, 9)
        os.waitpid(pid, 0)


def test_a_runner_lists_only_itself_and_what_it_forks(evaldir, bystander):  # noqa: F811
    need("namespaces")
    if os.geteuid() != 0:
        pytest.skip("the hidepid procfs needs root; test_without_root_* covers the other way")
    tmpdir, _ = evaldir
    report, seen = in_sandbox(tmpdir, look_with_a_child, keep_group=True, own_proc=True)
    assert report["procfs"] is True and report["level"] == "full", report
    assert seen["leaked"] == [] and os.getpid() not in seen["pids"], seen
    assert len(seen["pids"]) == 2 and seen["self"] in seen["pids"] and seen["child_listed"], seen
    assert seen["cpuinfo"] == "ok: True" and seen["status"] == "ok: True", seen
    # The host's /proc is untouched: every process is still listed here.
    assert bystander.pid in look()["pids"]


def test_without_the_wall_a_runner_reads_other_command_lines(evaldir, bystander):  # noqa: F811
    """What the wall takes away: the same sandbox without it lists the bystander."""
    tmpdir, _ = evaldir
    report, seen = in_sandbox(tmpdir, look, keep_group=True)
    assert report["procfs"] is False
    assert seen["leaked"] == [bystander.pid], seen


def test_without_root_a_runner_gets_a_pid_namespace_of_its_own(outside, bystander):  # noqa: F811
    """A plain user's judge (in a user namespace of its own, made by private_mounts) forks
    its runner into a PID namespace; the runner mounts that namespace's procfs."""
    if os.geteuid() != 0:
        pytest.skip("this test becomes an unprivileged user itself, which needs root")
    if not walls.kernel_support()["namespaces"] and os.environ.get("KERNELGATE_REQUIRE_SANDBOX") != "1":
        pytest.skip("no namespaces here")
    tmpdir = os.path.join(outside, "job")
    os.mkdir(tmpdir)
    os.chown(tmpdir, walls.NOBODY, walls.NOBODY)
    os.chmod(outside, 0o755)

    def judge():
        import ctypes
        os.setgroups([])
        os.setresgid(walls.NOBODY, walls.NOBODY, walls.NOBODY)
        os.setresuid(walls.NOBODY, walls.NOBODY, walls.NOBODY)
        ctypes.CDLL(None).prctl(4, 1, 0, 0, 0)    # dumpable, as a plain user's process is
        ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)   # a subreaper, as the judge is
        ok, detail = mounts.private_mounts(tmpdir)
        if not ok:
            return {"userns": detail}
        wanted = [procfs.own_pidns_wanted("cpu_interpreter"), procfs.own_pidns_wanted("gpu")]
        r, w = os.pipe()
        pids = []
        for _ in range(2):     # two runners, as a judge forks: each in a namespace of its own
            pid = procfs.fork_runner("cpu_interpreter")
            if pid == 0:
                try:
                    os.close(r)
                    report = walls.apply(tmpdir, {"timeout_s": 30}, keep_group=True, own_proc=True)
                    os.write(w, (json.dumps({"report": report, "seen": look_with_a_child()}) + "\n").encode())
                finally:
                    os._exit(0)
            pids.append(pid)
        os.close(w)
        data = b""
        while chunk := os.read(r, 1 << 16):
            data += chunk
        waited = [os.waitpid(p, 0)[0] for p in pids]   # the judge's children, though a helper forked them
        return {"wanted": wanted, "pids": pids, "waited": waited,
                "runners": [json.loads(ln) for ln in data.decode().splitlines()]}

    got = fork_run(judge)
    assert "userns" not in got, got
    assert got["wanted"] == [True, False], got
    assert got["waited"] == got["pids"] and len(set(got["pids"])) == 2, got
    assert len(got["runners"]) == 2, got
    for r in got["runners"]:
        assert r["report"]["procfs"] is True and r["report"]["level"] == "full", r["report"]
        assert r["seen"]["pids"] == [1, 2] and r["seen"]["self"] == 1 and r["seen"]["leaked"] == [], r
        assert r["seen"]["cpuinfo"] == "ok: True" and r["seen"]["status"] == "ok: True", r


def test_where_the_wall_cannot_go_up_the_report_says_why(evaldir):  # noqa: F811
    """Without CAP_SYS_ADMIN (and no user namespace of its own) no procfs can be mounted:
    the runner goes on, its report partial and naming the wall, as the verdict's
    env.sandbox_detail will."""
    if os.geteuid() != 0:
        pytest.skip("drops root's capabilities itself")
    tmpdir, _ = evaldir

    def body():
        walls.drop_capabilities()
        report = walls.apply(tmpdir, {"timeout_s": 30}, mounts=False, own_proc=True)
        return report, look()["leaked"]
    report, _ = fork_run(body)
    assert report["procfs"] is False and report["level"] == "partial", report
    assert "own /proc: unshare(CLONE_NEWNS): Operation not permitted" in report["detail"], report
