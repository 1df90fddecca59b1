"""The sandbox's walls seen from a child forked here with walls.apply() (no zygote).

Each test forks, applies the sandbox in the child, tries what a hostile kernel would
and reports back. A wall the kernel supports (walls.kernel_support()) must hold:
those tests assert. Where the kernel lacks it they skip, or fail with
KERNELGATE_REQUIRE_SANDBOX=1 (CI on a host known to have it).
"""

import ctypes
import errno
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback

import pytest
import torch

from kgharness.sandbox import uidrop, walls

KS = walls.kernel_support()


def need(feature):
    if KS[feature]:
        return
    msg = f"this kernel or process offers no {feature}"
    if os.environ.get("KERNELGATE_REQUIRE_SANDBOX") == "1":
        pytest.fail(msg + " (KERNELGATE_REQUIRE_SANDBOX=1)")
    pytest.skip(msg)


def attempt(fn):
    try:
        return "ok: " + repr(fn())[:200]
    except BaseException as e:   # the point is to report what the wall did
        return f"error: {type(e).__name__}: {e}"


def read(path):
    with open(path, "rb") as f:
        return f.read(64)


def write(path, nbytes=5):
    with open(path, "wb") as f:
        return f.write(b"x" * nbytes)


def fork_run(fn, timeout=120):
    """Run fn() in a forked child; returns its JSON result (or {"error": traceback})."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            try:
                out = {"result": fn()}
            except BaseException:
                out = {"error": traceback.format_exc()}
            os.write(w, json.dumps(out, default=str).encode())
        finally:
            os._exit(0)
    os.close(w)
    data, deadline = b"", time.monotonic() + timeout
    try:
        while select.select([r], [], [], max(0.0, deadline - time.monotonic()))[0]:
            chunk = os.read(r, 1 << 16)
            if not chunk:
                break
            data += chunk
    finally:
        os.close(r)
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.waitpid(pid, 0)
    out = json.loads(data) if data else {"error": "the child did not report"}
    assert "error" not in out, out["error"]
    return out["result"]


def in_sandbox(tmpdir, fn, timeout=120, **kw):
    """fork_run with the sandbox applied to tmpdir first; returns (apply's report, fn's result)."""
    def body():
        os.chdir(tmpdir)
        os.environ.update(TMPDIR=tmpdir, HOME=tmpdir)
        tempfile.tempdir = None
        report = walls.apply(tmpdir, {"timeout_s": timeout}, **kw)
        return report, fn()
    return fork_run(body, timeout)


@pytest.fixture
def outside():
    """A directory outside /tmp (so only Landlock, not the private /tmp, can hide it)."""
    d = tempfile.mkdtemp(prefix="kg-outside-", dir="/var/tmp")
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def evaldir():
    """An evaluation's temp dir inside a zygote-like base under /tmp, with a sibling."""
    base = tempfile.mkdtemp(prefix="kgz-test-")
    tmpdir = tempfile.mkdtemp(prefix="job-", dir=base)
    other = tempfile.mkdtemp(prefix="job-", dir=base)
    with open(os.path.join(other, "verdict.json"), "w") as f:
        f.write("another evaluation's file")
    yield tmpdir, other
    shutil.rmtree(base, ignore_errors=True)


def test_secrets_and_data_dir_unreadable(evaldir, outside, monkeypatch):
    need("landlock")
    tmpdir, other = evaldir
    secret = os.path.join(outside, "secret.txt")
    data = os.path.join(outside, "data")
    os.mkdir(data)
    for p in (secret, os.path.join(data, "keys.json")):
        with open(p, "w") as f:
            f.write("api-key-123")
    monkeypatch.setenv("KERNELGATE_DATA_DIR", data)
    denied = [secret, os.path.join(data, "keys.json"), "/etc/shadow", "/etc/gshadow"]
    denied = [p for p in denied if os.path.exists(p)]
    for mounts in (None, False):    # Landlock alone must seal the siblings too
        report, res = in_sandbox(tmpdir, lambda: {
            **{p: attempt(lambda p=p: read(p)) for p in denied},
            "ls data": attempt(lambda: os.listdir(data)),
            "ls /root": attempt(lambda: os.listdir("/root")),
            "ls /etc": attempt(lambda: os.listdir("/etc")),
            "sibling": attempt(lambda: read(os.path.join(other, "verdict.json"))),
            "ls base": attempt(lambda: os.listdir(os.path.dirname(tmpdir))),
            "passwd": attempt(lambda: read("/etc/passwd")),
            "own": attempt(lambda: write(os.path.join(tmpdir, "mine.txt"))),
        }, mounts=mounts)
        assert report["landlock"], report
        for p in denied + ["ls data", "ls /etc"] + (["ls /root"] if os.path.isdir("/root") else []):
            assert res[p].startswith("error: PermissionError"), (mounts, p, res)
        if mounts is None:   # the private /tmp holds only the path down to this evaluation's dir
            assert res["sibling"].startswith("error: FileNotFoundError"), res
            assert res["ls base"] == "ok: " + repr([os.path.basename(tmpdir)]), res
        else:
            for p in ("sibling", "ls base"):
                assert res[p].startswith("error: PermissionError"), (p, res)
        assert res["passwd"].startswith("ok") and res["own"] == "ok: 5", res


def test_private_tmp_and_shm_leave_nothing_behind(evaldir):
    need("namespaces")
    tmpdir, _ = evaldir
    token = f"kg-walls-{os.getpid()}-{time.monotonic_ns()}"
    plants = [f"/dev/shm/{token}-host", f"/tmp/{token}-host"]
    for p in plants:
        with open(p, "w") as f:
            f.write("host-secret")
    before = {d: set(os.listdir(d)) for d in ("/tmp", "/dev/shm")}
    try:
        report, res = in_sandbox(tmpdir, lambda: {
            "write shm": attempt(lambda: write(f"/dev/shm/{token}-child", 1 << 20)),
            "write tmp": attempt(lambda: write(f"/tmp/{token}-child", 1 << 20)),
            **{p: attempt(lambda p=p: read(p)) for p in plants},
            "ls shm": os.listdir("/dev/shm"),
            "ls tmp": os.listdir("/tmp"),
            "own": attempt(lambda: write(os.path.join(tmpdir, "mine.txt"))),
            "size": os.statvfs("/tmp").f_blocks * os.statvfs("/tmp").f_frsize,
        })
        assert report["mountns"] and report["level"] == "full", report
        assert res["write shm"] == res["write tmp"] == f"ok: {1 << 20}", res
        for p in plants:
            assert res[p].startswith("error: FileNotFoundError"), res
        assert res["ls shm"] == [f"{token}-child"], res
        # /tmp holds the child's file and the path down to its bound-back temp dir
        # the child's file and the way down to its own dir (and, when the repository itself
        # lives under /tmp, the way down to the paths it reads there): nothing of the host's
        skeleton = {tmpdir.split("/")[2]} | {p.split("/")[2] for p in walls.read_paths(tmpdir=tmpdir)[0]
                                            if p.startswith("/tmp/")}
        assert f"{token}-child" in res["ls tmp"] and set(res["ls tmp"]) <= skeleton | {f"{token}-child"}, res
        assert res["own"] == "ok: 5" and os.path.exists(os.path.join(tmpdir, "mine.txt"))
        assert res["size"] == walls.TMPFS_MB << 20, res
        # the host is as it was: its plants intact, nothing of the child's
        for d in ("/tmp", "/dev/shm"):
            assert not [n for n in set(os.listdir(d)) - before[d] if token in n]
            assert not os.path.exists(f"{d}/{token}-child")
        for p in plants:
            assert open(p).read() == "host-secret"
        # a later evaluation starts from an empty /dev/shm
        _, res2 = in_sandbox(tmpdir, lambda: os.listdir("/dev/shm"))
        assert res2 == [], res2
    finally:
        for p in plants:
            os.unlink(p)


def test_tmpfs_size_limit_holds(evaldir):
    need("namespaces")
    tmpdir, _ = evaldir

    def fill():
        out = {"tmp 6": attempt(lambda: write("/tmp/a", 6 << 20))}
        try:   # /tmp and /dev/shm share the one limit
            write("/dev/shm/b", 6 << 20)
            out["shm 6"] = "ok"
        except OSError as e:
            out["shm 6"] = e.errno
        os.unlink("/tmp/a")
        try:
            write("/dev/shm/c", 16 << 20)
            out["shm 16"] = "ok"
        except OSError as e:
            out["shm 16"] = e.errno
        return out
    report, res = in_sandbox(tmpdir, fill, tmpfs_mb=8)
    assert report["mountns"] and report["tmpfs_mb"] == 8, report
    assert res == {"tmp 6": f"ok: {6 << 20}", "shm 6": errno.ENOSPC, "shm 16": errno.ENOSPC}, res


def test_without_private_mounts_landlock_denies_tmp_and_shm(evaldir):
    need("landlock")
    tmpdir, _ = evaldir
    token = f"kg-walls-{os.getpid()}-{time.monotonic_ns()}"
    plant = f"/dev/shm/{token}-host"
    with open(plant, "w") as f:
        f.write("host-secret")
    try:
        report, res = in_sandbox(tmpdir, lambda: {
            "read": attempt(lambda: read(plant)),
            "write shm": attempt(lambda: write(f"/dev/shm/{token}-child")),
            "ls tmp": attempt(lambda: os.listdir("/tmp")),
            "own": attempt(lambda: write(os.path.join(tmpdir, "mine.txt"))),
        }, mounts=False)
        assert not report["mountns"] and report["level"] == "partial", report
        assert "Landlock denies both" in report["detail"], report
        for k in ("read", "write shm", "ls tmp"):
            assert res[k].startswith("error: PermissionError"), res
        assert res["own"] == "ok: 5" and not os.path.exists(f"/dev/shm/{token}-child")
    finally:
        os.unlink(plant)


def test_judge_namespace_is_shared_by_its_runners(evaldir):
    """The judge makes the private mounts once; runners forked after it reuse them."""
    need("namespaces")
    tmpdir, _ = evaldir
    rdir = os.path.join(tmpdir, "runner")
    os.mkdir(rdir)

    def judge():
        ok, detail = walls.private_mounts(tmpdir, size_mb=16)
        write("/dev/shm/from-judge")
        report, res = in_sandbox(rdir, lambda: {"ls": os.listdir("/dev/shm"),
                                                "own": attempt(lambda: write("x.txt"))})
        return ok, detail, report, res
    ok, detail, report, res = fork_run(judge)
    assert ok and "16 MiB" in detail, detail
    assert report["mountns"] and report["tmpfs_mb"] == 16, report
    assert res == {"ls": ["from-judge"], "own": "ok: 5"}, res
    assert not os.path.exists("/dev/shm/from-judge")


def test_paths_under_tmp_that_the_evaluation_reads_stay_visible_read_only(evaldir):
    need("namespaces")
    tmpdir, _ = evaldir
    keep = tempfile.mkdtemp(prefix="kg-keep-")   # a venv or sys.path entry under /tmp, say
    with open(os.path.join(keep, "mod.py"), "w") as f:
        f.write("x = 1\n")
    try:
        def body():
            ok, detail = walls.private_mounts(tmpdir, size_mb=8, keep=[keep])
            try:
                write(os.path.join(keep, "new.py"))
                w = "ok"
            except OSError as e:
                w = e.errno
            return ok, detail, attempt(lambda: read(os.path.join(keep, "mod.py"))), w, \
                os.listdir(os.path.dirname(tmpdir))
        ok, detail, r, w, listing = fork_run(body)
        assert ok, detail
        assert r == "ok: " + repr(b"x = 1\n") and w == errno.EROFS, (r, w)
        assert listing == [os.path.basename(tmpdir)]
        assert not os.path.exists(os.path.join(keep, "new.py"))
    finally:
        shutil.rmtree(keep)


def test_a_sys_path_entry_through_a_link_under_tmp_still_imports(evaldir, outside):
    """CI's clone lives under /tmp and reaches its venv through a link (.venv ->
    ~/.cache/...): under the private /tmp that link must still lead to the packages, or
    every lazy import in a runner fails (seen: triton.experimental at the first launch)."""
    need("namespaces")
    tmpdir, _ = evaldir
    pkgs = os.path.join(outside, "site")
    os.makedirs(pkgs)
    with open(os.path.join(pkgs, "kg_linked_mod.py"), "w") as f:
        f.write("x = 42\n")
    link_dir = tempfile.mkdtemp(prefix="kg-clone-")
    link = os.path.join(link_dir, ".venv")
    os.symlink(pkgs, link)
    try:
        def body():
            sys.path.insert(0, link)
            ok, detail = walls.private_mounts(tmpdir, size_mb=8)
            import kg_linked_mod
            return ok, detail, kg_linked_mod.x, os.path.islink(link)
        ok, detail, x, still_link = fork_run(body)
        assert ok, detail
        assert x == 42 and still_link
    finally:
        shutil.rmtree(link_dir)


def test_private_mounts_without_root_use_a_user_namespace(outside):
    if os.geteuid() != 0:
        pytest.skip("this test becomes an unprivileged user itself, which needs root")
    tmpdir = os.path.join(outside, "job")
    os.mkdir(tmpdir)
    os.chown(tmpdir, walls.NOBODY, walls.NOBODY)
    os.chmod(outside, 0o755)
    token = f"kg-walls-{os.getpid()}-{time.monotonic_ns()}"

    def body():
        os.setgroups([])
        os.setresgid(walls.NOBODY, walls.NOBODY, walls.NOBODY)
        os.setresuid(walls.NOBODY, walls.NOBODY, walls.NOBODY)
        ctypes.CDLL(None).prctl(4, 1, 0, 0, 0)   # dumpable, as a plain user's process is
        support = walls.kernel_support()["namespaces"]
        report = walls.apply(tmpdir, {"timeout_s": 30})
        return support, report, attempt(lambda: write(f"/dev/shm/{token}")), os.getresuid()
    support, report, w, resuid = fork_run(body)
    if not support:
        need_msg = "unprivileged user namespaces are off here"
        if os.environ.get("KERNELGATE_REQUIRE_SANDBOX") == "1":
            pytest.fail(need_msg)
        pytest.skip(need_msg)
    assert report["mountns"] and report["netns"] and report["level"] == "full", report
    assert w == "ok: 5" and not os.path.exists(f"/dev/shm/{token}"), w
    assert resuid == [walls.NOBODY] * 3 and report["uid"] == walls.NOBODY


def test_torch_and_triton_import_and_run_under_the_sandbox(evaldir):
    need("landlock")
    tmpdir, _ = evaldir
    script = (
        "import os, sys, torch, triton, triton.language as tl\n"
        "@triton.jit\n"
        "def add_one(x_ptr, n, BLOCK: tl.constexpr):\n"
        "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)\n"
        "x = torch.zeros(1000)\n"
        "add_one[(4,)](x, 1000, BLOCK=256)\n"
        "print('sum', float(x.sum()))\n"
        "try:\n    open('/etc/shadow').read()\n    print('shadow read')\n"
        "except OSError as e:\n    print('shadow', type(e).__name__)\n")

    def fresh():   # a new interpreter: every import comes from disk under the sandbox
        env = dict(os.environ, TRITON_INTERPRET="1", PYTHONDONTWRITEBYTECODE="1")
        p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                           timeout=240, env=env)
        return {"rc": p.returncode, "out": p.stdout, "err": p.stderr[-3000:]}

    def in_process():   # triton imported after the sandbox, torch inherited from the fork
        os.environ["TRITON_INTERPRET"] = "1"
        import triton
        import triton.language as tl

        @triton.jit
        def add_two(x_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 2, mask=offs < n)
        x = torch.zeros(100)
        add_two[(1,)](x, 100, BLOCK=128)
        return float(x.sum())
    report, res = in_sandbox(tmpdir, fresh, timeout=300)
    assert report["landlock"], report
    assert res["rc"] == 0 and "sum 1000.0" in res["out"], res
    assert "shadow PermissionError" in res["out"] or not os.path.exists("/etc/shadow"), res
    _, total = in_sandbox(tmpdir, in_process, timeout=300)
    assert total == 200.0


def test_uid_drop_happens_or_says_why(evaldir, monkeypatch):
    tmpdir, _ = evaldir
    monkeypatch.setattr(uidrop, "_uid_verdicts", {})   # probe() below leaves its verdict there
    blockers = walls.uid_drop_blockers()
    report, res = in_sandbox(tmpdir, lambda: {"resuid": os.getresuid(), "groups": os.getgroups()},
                             drop_uid=True)
    if os.geteuid() != 0:
        assert report["uid"] == os.geteuid() and "not root" in report["uid_note"], report
    elif blockers:   # this CI host: the venv is under /root (0700)
        assert report["uid"] == 0 and res["resuid"] == [0, 0, 0], report
        assert blockers[0] in report["uid_note"] and "stays uid 0" in report["uid_note"], report
        assert report["caps_dropped"], report
    else:
        assert report["uid"] == walls.NOBODY and report["uid_note"] == "", report
        assert res == {"resuid": [walls.NOBODY] * 3, "groups": []}, res
    p = walls.probe(drop_uid=True)
    assert p["uid_drop"] == (os.geteuid() == 0 and not blockers), p
    assert p["uid_drop"] or p["uid_note"], p


def test_full_sandbox_with_the_uid_drop(evaldir, monkeypatch):
    """apply(drop_uid=True) where nobody could read everything (pretended here: this host's
    venv is under /root): every wall and the drop together, in apply's order."""
    if os.geteuid() != 0:
        pytest.skip("the uid drop needs root")
    need("namespaces")
    tmpdir, _ = evaldir
    with open(os.path.join(tmpdir, "output.log"), "w") as f:
        f.write("harness output")
    monkeypatch.setitem(uidrop._blockers, (walls.NOBODY, walls.NOBODY), [])
    monkeypatch.setattr(uidrop, "_uid_verdicts", {})

    def body():
        tid = ctypes.CDLL(None).syscall(186 if os.uname().machine == "x86_64" else 178)
        return {"resuid": os.getresuid(), "groups": os.getgroups(),
                "caps": [ln.split()[1] for ln in open("/proc/self/status") if ln.startswith("CapEff")],
                "proc": attempt(lambda: write(f"/proc/self/task/{tid}/comm", 7)),
                "own": attempt(lambda: write(os.path.join(tmpdir, "mine.txt"))),
                "log": attempt(lambda: write(os.path.join(tmpdir, "output.log"))),
                "tmp": attempt(lambda: write("/tmp/x")), "shm": attempt(lambda: write("/dev/shm/x")),
                "passwd": attempt(lambda: read("/etc/passwd")),
                "shadow": attempt(lambda: read("/etc/shadow")),
                "kill zygote": attempt(lambda: os.kill(os.getppid(), 0))}
    report, res = in_sandbox(tmpdir, body, drop_uid=True)
    n = walls.NOBODY
    assert report["uid"] == n and report["uid_note"] == "" and report["level"] == "full", report
    assert report["caps_dropped"], report
    assert res["resuid"] == [n, n, n] and res["groups"] == [] and res["caps"] == ["0000000000000000"], res
    for k in ("proc", "own", "log", "tmp", "shm", "passwd"):
        assert res[k].startswith("ok"), (k, res)
    assert res["shadow"].startswith("error: PermissionError"), res
    assert res["kill zygote"].startswith("error: PermissionError"), res
    assert os.stat(os.path.join(tmpdir, "mine.txt")).st_uid == n


def test_switch_uid_gives_up_root(outside):
    if os.geteuid() != 0:
        pytest.skip("switch_uid needs root")
    tmpdir = os.path.join(outside, "job")
    os.mkdir(tmpdir)
    with open(os.path.join(tmpdir, "output.log"), "w") as f:
        f.write("harness output")
    root_only = os.path.join(outside, "root-only.txt")
    with open(root_only, "w") as f:
        f.write("secret")
    os.chmod(root_only, 0o600)
    os.chmod(outside, 0o755)

    def body():
        walls.switch_uid(tmpdir)
        libc = ctypes.CDLL(None, use_errno=True)
        caps = [ln.split()[1] for ln in open("/proc/self/status") if ln.startswith(("CapEff", "CapPrm"))]
        tid = ctypes.CDLL(None).syscall(186 if os.uname().machine == "x86_64" else 178)
        return {"resuid": os.getresuid(), "resgid": os.getresgid(), "groups": os.getgroups(),
                "dumpable": libc.prctl(3, 0, 0, 0, 0), "caps": caps,
                "proc": attempt(lambda: write(f"/proc/self/task/{tid}/comm", 7)),
                "owner": os.stat(os.path.join(tmpdir, "output.log")).st_uid,
                "root-only": attempt(lambda: read(root_only)),
                "own": attempt(lambda: write(os.path.join(tmpdir, "mine.txt")))}
    res = fork_run(body)
    n = walls.NOBODY
    assert res["resuid"] == res["resgid"] == [n, n, n] and res["groups"] == [], res
    assert res["dumpable"] == 1 and res["proc"] == "ok: 7", res
    assert res["caps"] == ["0000000000000000"] * 2, res
    assert res["owner"] == n and res["own"] == "ok: 5", res
    assert res["root-only"].startswith("error: PermissionError"), res


def test_uid_drop_blockers_name_what_is_closed(outside):
    tree = os.path.join(outside, "closed", "pkg")
    os.makedirs(tree)
    module = os.path.join(tree, "mod.py")
    with open(module, "w") as f:
        f.write("x = 1\n")
    os.chmod(outside, 0o755)
    os.chmod(os.path.dirname(tree), 0o700)
    os.chmod(tree, 0o755)
    os.chmod(module, 0o600)
    uid = gid = 54321   # nobody's: owner and group bits never apply
    blocked = walls.uid_drop_blockers(uid, gid, paths=[tree])
    assert blocked and blocked[0].startswith(os.path.dirname(tree) + " ") and "no search" in blocked[0]
    os.chmod(os.path.dirname(tree), 0o711)
    assert [b.split(" ")[0] for b in walls.uid_drop_blockers(uid, gid, paths=[tree])] == [module]
    os.chmod(module, 0o644)
    assert walls.uid_drop_blockers(uid, gid, paths=[tree]) == []


def test_rules_list_etc_files_not_etc(evaldir, outside, monkeypatch):
    tmpdir, _ = evaldir
    monkeypatch.setenv(walls.EXTRA_READ_ENV, os.pathsep.join(["/etc", "/root", "/usr/share"]))
    gcc = os.path.join(outside, "gcc", "bin", "gcc")   # as CC=/opt/gcc/bin/gcc on the H200 image
    os.makedirs(os.path.dirname(gcc))
    with open(gcc, "w") as f:
        f.write("#!/bin/sh\n")
    os.chmod(gcc, 0o755)
    monkeypatch.setenv("CC", gcc)
    rules, dropped = walls.landlock_rules(tmpdir, extra_rules=[("/etc/shadow", 4)], private=True)
    paths = [p for p, _, _ in rules]
    assert "/etc/ld.so.cache" in paths and "/etc/passwd" in paths
    assert "/usr/share" in paths                             # the env override, guarded
    assert os.path.join(outside, "gcc") in paths             # the compiler's prefix, not just bin/
    for never in ("/", "/etc", "/root", "/opt", "/etc/shadow", os.path.dirname(tmpdir)):
        assert never not in paths, never
    assert {"/etc", "/root", "/etc/shadow"} <= set(dropped), dropped
    assert ("/tmp", walls.FS_EVERYTHING, "the evaluation's private tmpfs") in rules
    # Without the private tmpfs, /tmp is not granted: only the evaluation's dir and what the
    # interpreter reads there (the repository's own harness when a clone lives under /tmp).
    reads = set(walls.read_paths(tmpdir=tmpdir)[0]) | {os.path.realpath(tmpdir)}
    assert not any(p.startswith("/tmp") and p not in reads for p, _, _ in
                   walls.landlock_rules(tmpdir, private=False)[0])
    lines = walls.describe_rules(rules)
    assert len(lines) == len(rules) and any("/etc/ld.so.cache" in ln for ln in lines)


def test_probe_reports_mountns_uid_and_cuda_without_touching_cuda_here():
    p = walls.probe(cuda=True)
    assert {"mountns", "uid", "uid_drop", "uid_note", "cuda", "tmpfs_mb"} <= set(p), p
    assert p["mountns"] == bool(KS["namespaces"]), p
    assert set(p["cuda"]) == {"ok", "detail"}, p
    if os.environ.get("KERNELGATE_TEST_GPU"):
        assert p["cuda"]["ok"], p
    assert not torch.cuda.is_initialized()


def test_probe_turns_the_drop_off_when_cuda_fails_only_as_nobody(monkeypatch):
    if os.geteuid() != 0:
        pytest.skip("the uid drop needs root")
    need("namespaces")   # the probe's temp dir is reachable by nobody only in the private /tmp
    key = (walls.NOBODY, walls.NOBODY)
    monkeypatch.setitem(uidrop._blockers, key, [])   # pretend everything is readable
    monkeypatch.setattr(uidrop, "_uid_verdicts", {})
    monkeypatch.setattr(walls, "_cuda_check",
                        lambda: {"ok": os.geteuid() == 0, "detail": f"fake CUDA as uid {os.geteuid()}"})
    p = walls.probe(drop_uid=True, cuda=True)
    assert p["uid"] == 0 and p["uid_drop"] is False and p["cuda"]["ok"], p
    assert "CUDA failed as uid 65534 (fake CUDA as uid 65534)" in p["uid_note"], p
    with tempfile.TemporaryDirectory() as d:   # later runners of this process stay uid 0
        report, _ = in_sandbox(d, lambda: None, drop_uid=True)
    assert report["uid"] == 0 and "CUDA failed" in report["uid_note"], report


def test_a_runner_and_all_it_forks_stay_in_its_process_group(evaldir):
    """The judge stops a runner by its process group while the other side is timed. A
    helper that took a session of its own kept running then: during the reference's
    timed calls (a probe on this machine saw its parent stopped). setsid and setpgid
    fail in a runner and in everything it forks."""
    tmpdir, _ = evaldir

    def body():
        own = os.getpgid(0)
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:   # the helper a hostile candidate would fork
            os.close(r)
            res = {"setsid": attempt(os.setsid), "setpgid": attempt(lambda: os.setpgid(0, 0)),
                   "pgid": os.getpgid(0)}
            os.write(w, json.dumps(res).encode())
            os._exit(0)
        os.close(w)
        child = json.loads(os.read(r, 4096) or b"{}")
        os.waitpid(pid, 0)
        return {"own": own, "setsid": attempt(os.setsid), "child": child,
                "libc_setpgrp": attempt(lambda: ctypes.CDLL(None, use_errno=True).setpgid(0, 0))}

    report, got = in_sandbox(tmpdir, body, keep_group=True)
    assert report["pgroup"] is True, report
    assert got["setsid"].startswith("error: PermissionError"), got
    assert got["child"]["setsid"].startswith("error: PermissionError"), got
    assert got["child"]["setpgid"].startswith("error: PermissionError"), got
    assert got["child"]["pgid"] == got["own"], got
    assert got["libc_setpgrp"] == "ok: -1", got     # through libc too: the syscall itself fails
    # Without the wall (the judge's own sandbox) the same calls work.
    _, free = in_sandbox(tmpdir, lambda: attempt(lambda: os.setpgid(0, 0)))
    assert free.startswith("ok"), free
