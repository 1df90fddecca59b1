"""The child's walls, seen from inside a real child forked by a real zygote."""

import os
import shutil
import socket
import sys
import tempfile
import time
from pathlib import Path

import pytest
import torch

from kgharness.sandbox import walls
from zygote_client import ZygoteClient

TESTS = str(Path(__file__).resolve().parent)
PY_ROOT = str(Path(__file__).resolve().parent.parent)
TASK = "import torch\n"
TORCH_INIT = os.path.join(os.path.dirname(torch.__file__), "__init__.py")


@pytest.fixture(scope="module")
def data_dir():
    # Outside /tmp: the private /tmp would hide it anyway; here Landlock alone must.
    d = Path(tempfile.mkdtemp(prefix="kg-data-", dir="/var/tmp"))
    (d / "secret.txt").write_text("api-key-123")
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="module")
def z(data_dir):
    with ZygoteClient(evaluator="zygote_evaluators:evaluate",
                      env={"PYTHONPATH": TESTS, "KERNELGATE_DATA_DIR": str(data_dir)}) as client:
        yield client


KERNEL = walls.kernel_support()


def need(z, layer):
    """A layer the kernel offers must hold; one it lacks skips (fails under
    KERNELGATE_REQUIRE_SANDBOX=1)."""
    offered = {"netns": KERNEL["namespaces"], "landlock": KERNEL["landlock"]}.get(layer, True)
    if offered:
        assert z.hello["sandbox"][layer], z.hello["sandbox"]
        return
    if os.environ.get("KERNELGATE_REQUIRE_SANDBOX") == "1":
        pytest.fail(f"no {layer} on this kernel (KERNELGATE_REQUIRE_SANDBOX=1)")
    pytest.skip(f"{layer} not offered by this kernel: {z.hello['sandbox']['detail']}")


def test_probe_reports_every_layer():
    res = walls.probe()
    assert set(res) >= {"netns", "landlock", "rlimits", "mountns", "uid", "uid_drop", "level", "detail"}
    full = res["netns"] and res["landlock"] and res["rlimits"] and res["mountns"]
    assert res["level"] == ("full" if full else "partial")
    assert full or res["detail"]


def test_read_paths_leave_out_data_dir_and_cwd(monkeypatch, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    monkeypatch.setenv("KERNELGATE_DATA_DIR", str(data))
    monkeypatch.setattr(sys, "path", sys.path + [str(tmp_path), str(data / "sub"), "/"])
    paths, dropped = walls.read_paths(zygote_cwd=str(tmp_path / "elsewhere"))
    assert str(tmp_path) in dropped                # an ancestor of the data dir
    assert not any(p == "/" or str(data) in p for p in paths)
    paths, _ = walls.read_paths(zygote_cwd=PY_ROOT)
    assert PY_ROOT not in paths                    # the zygote's cwd is not granted
    assert os.path.join(PY_ROOT, "kgharness") in paths


def test_network_is_unreachable(z):
    need(z, "netns")
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    try:
        p = z.evaluate(TASK, f"net {srv.getsockname()[1]}", {"timeout_s": 20})["probe"]
    finally:
        srv.close()
    assert p["local"].startswith("error"), p
    assert p["public"].startswith("error"), p
    assert p["udp"].startswith("error") and "unreachable" in p["udp"], p
    assert p["ifaces"].startswith("ok") and "eth" not in p["ifaces"], p


def test_data_dir_unreadable_site_packages_readable(z, data_dir):
    need(z, "landlock")
    secret = str(data_dir / "secret.txt")
    p = z.evaluate(TASK, f"read {secret} {TORCH_INIT} /etc/hostname", {"timeout_s": 20})["probe"]
    assert p[secret].startswith("error: PermissionError"), p
    assert p[TORCH_INIT].startswith("ok"), p
    p = z.evaluate(TASK, f"listdir {data_dir} {os.path.dirname(TORCH_INIT)}")["probe"]
    assert p[str(data_dir)].startswith("error"), p
    assert p[os.path.dirname(TORCH_INIT)].startswith("ok"), p


def test_other_jobs_and_zygote_cwd_unreadable(z):
    need(z, "landlock")
    # (harness/py/tests is readable here only because PYTHONPATH names it)
    repo_file = os.path.join(os.path.dirname(PY_ROOT), "doc.go")   # a file of the repository, outside the harness package
    base = os.path.dirname(z.evaluate(TASK, "ok")["probe"]["tmpdir"])   # holds every job's dir
    other = os.path.join(base, "job-other")      # another evaluation's dir, as the zygote makes it
    os.mkdir(other, 0o700)
    with open(os.path.join(other, "secret.txt"), "w") as f:
        f.write("another evaluation's file")
    try:
        p = z.evaluate(TASK, f"read {repo_file} {PY_ROOT}/kgharness/../../doc.go "
                             f"{other}/secret.txt")["probe"]
        p.update(z.evaluate(TASK, f"listdir {PY_ROOT} {other}")["probe"])
        listing = z.evaluate(TASK, f"listdir {base}")["probe"][base]
    finally:
        shutil.rmtree(other)
    private_tmp = z.hello["sandbox"].get("level") == "full"
    for path, got in p.items():
        if private_tmp and os.path.realpath(path).startswith("/tmp/") and got.startswith("ok: ["):
            # a repository under /tmp: the child lists the private tmpfs, where only the way
            # down to what it may read was made (never the host's files)
            assert set(eval(got[4:])) <= {"tests", "kgharness"}, (path, got)
        else:
            assert got.startswith("error"), (path, p)
    # denied, or (in the private /tmp) only the path down to the evaluation's own dir
    assert listing.startswith("error") or ("job-other" not in listing and listing.count("job-") == 1), listing


def test_writes_outside_tmpdir_fail(z, data_dir):
    need(z, "landlock")
    targets = [str(data_dir.parent / "kg-escape.txt"), os.path.join(PY_ROOT, "escape.txt"),
               "/dev/shm/../escape.txt", "/etc/kg-escape.txt", "inside.txt"]
    private = ["/tmp/kg-escape.txt", "/dev/shm/kg-escape.txt"]
    p = z.evaluate(TASK, "write " + " ".join(targets + private))["probe"]
    for t in targets[:-1]:
        # under /tmp (a repository cloned there), a write lands in the private tmpfs
        if not (os.path.realpath(t).startswith("/tmp/") and z.hello["sandbox"]["level"] == "full"):
            assert p[t].startswith("error"), (t, p)
        assert not os.path.exists(t)
    assert p["inside.txt"] == "ok: 5", p           # relative to the private temp dir
    # /tmp and /dev/shm: the child's private tmpfs when it has one, denied otherwise;
    # the host's never see the file
    for t in private:
        assert p[t] == "ok: 5" if z.hello["sandbox"]["level"] == "full" else p[t].startswith("error"), p
        assert not os.path.exists(t)


def test_rlimits_applied(z):
    need(z, "rlimits")
    v = z.evaluate(TASK, "ok")
    assert v["probe"]["sandbox"]["rlimits"] is True
    assert v["env"]["sandbox"] if "sandbox" in v["env"] else True


def test_scan_attributes_descendants(tmp_path):
    pid = os.fork()
    if pid == 0:
        os.setpgid(0, 0)
        if os.fork() == 0:
            os.setsid()        # a grandchild leaving the group is still found by ancestry
            time.sleep(30)
            os._exit(0)
        time.sleep(30)
        os._exit(0)
    try:
        deadline = time.monotonic() + 5
        while True:
            groups, _ = walls.scan(os.getpid(), {pid})
            if len(groups[pid][0]) == 2 or time.monotonic() > deadline:
                break
            time.sleep(0.02)
        pids, rss = groups[pid]
        assert len(pids) == 2 and pid in pids and rss > 0
    finally:
        walls.kill_group(pid, pids)
        os.waitpid(pid, 0)


def test_describe_tells_stopped_from_sleeping_and_busy():
    """The zygote's log of a stuck stage: each process's state, CPU time and last CPU."""
    from kgharness import procs
    sleeper = os.fork()
    if sleeper == 0:
        time.sleep(30)
        os._exit(0)
    spinner = os.fork()
    if spinner == 0:
        t_end = time.monotonic() + 30
        while time.monotonic() < t_end:
            pass
        os._exit(0)
    try:
        os.kill(sleeper, 19)        # SIGSTOP
        time.sleep(0.5)
        got = {int(p.split()[0]): p.split() for p in procs.describe({sleeper, spinner}).split("; ")}
        assert got[sleeper][2] == "T", got
        assert got[spinner][2] == "R", got
        used = {p: float(got[p][-1].removeprefix("t=").removesuffix("s")) for p in got}
        assert used[spinner] > 0.05 and used[sleeper] <= 0.05, got
        assert len(procs.load().split()) == 4
    finally:
        for p in (sleeper, spinner):
            os.kill(p, 9)
            os.waitpid(p, 0)


def test_tail_follows_no_links_and_never_blocks(tmp_path):
    secret = os.path.join(tmp_path, "secret.txt")
    with open(secret, "w") as f:
        f.write("root:$6$hash")
    cases = {"symlink": lambda p: os.symlink(secret, p), "hardlink": lambda p: os.link(secret, p),
             "fifo": os.mkfifo, "plain": lambda p: open(p, "w").write("line 1\nline 2\n")}
    for name, make in cases.items():
        d = os.path.join(tmp_path, name)
        os.mkdir(d)
        make(os.path.join(d, "output.log"))
        t0 = time.monotonic()
        got = walls.tail(os.path.join(d, "output.log"), 8)
        assert time.monotonic() - t0 < 2
        assert got == ("line 1\nline 2\n"[-8:] if name == "plain" else ""), (name, got)
    assert walls.tail(os.path.join(tmp_path, "plain", "output.log"), 100) == "line 1\nline 2\n"
