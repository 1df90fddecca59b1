"""The sandbox of an evaluation's processes: namespaces, Landlock, rlimits, capabilities, uid.

Applied in forked children just before untrusted code can run (kgharness.judge.process),
through raw syscalls via ctypes: the GPU image has no package manager and no
sandbox tool. apply() puts the walls up in this order (each needs the privileges
the next ones take away):

  private_mounts     a mount namespace where one size-limited tmpfs backs /tmp and
                     /dev/shm; the evaluation's temp dir is bound through. It dies with
                     the namespace's last process, and what was written there with it.
  hide_others        own_proc=True (runners): a procfs of its own on /proc that lists no
                     process but its own and what it forks (kgharness.sandbox.procfs)
  apply_netns        a network namespace with nothing in it
  apply_rlimits      core, file size, fds, CPU
  apply_landlock     read-only: landlock_rules() (the interpreter and its packages, the
                     harness, the toolchain, a short /etc allowlist, /proc, /sys);
                     read-write: the temp dir, the private tmpfs, devices; no TCP, no
                     signals or abstract sockets outside the sandbox
  switch_uid         drop_uid=True: uid/gid 65534, when that uid can read all it needs
  drop_capabilities
  apply_keep_group   keep_group=True (runners): setsid and setpgid fail, so all the
                     process forks stays in the group the judge stops (kgharness.sandbox.pgroup)

Every layer is best effort: a layer that cannot be applied is reported (level
"partial", detail naming it), never fatal, because failing every evaluation is
worse than running one with fewer walls. The zygote adds what needs no privilege
at all: its own process-group watchdog. To see what a new host needs:
`python -m kgharness.sandbox [--cuda] [--drop-uid]` prints the rules and the probe.

Each wall lives in a module of its own, small enough to review against the kernel's
documentation alone: mounts, landlock (with readpaths, the policy of what may be read,
which mounts and uidrop follow too), uidrop, pgroup; procs is the zygote's side. This module
keeps what needs the whole picture (the order, the probe, the report) and keeps their
names working as sandbox.X for the callers that use them.
"""

import ctypes
import os
import resource

from . import pgroup, procfs
from .landlock import (FS_EVERYTHING, SCOPE_ABSTRACT_UNIX, apply_landlock, describe_rules,
                       landlock_abi, landlock_rules)
from .linux import CLONE_NEWNET, CLONE_NEWUSER, SYS_CAPSET, errno_msg, libc
from .mounts import TMPFS_MB, private_active, private_mb, private_mounts
from ..options import timeout_s
from ..procs import kill_group, kill_pid, nproc_limit, scan, tail
from .readpaths import EXTRA_READ_ENV, read_paths
from .uidrop import NOBODY, apply_uid, drop_bounding, refuse, switch_uid, uid_drop_blockers

# What callers and tests use as sandbox.X; the layers' own modules define them.
__all__ = [
    "EXTRA_READ_ENV", "FS_EVERYTHING", "NOBODY", "SCOPE_ABSTRACT_UNIX", "TMPFS_MB",
    "apply", "apply_landlock", "apply_netns", "apply_rlimits", "describe_rules",
    "drop_capabilities", "kernel_support", "kill_group", "landlock_rules", "private_active",
    "private_mounts", "probe", "read_paths", "scan", "switch_uid", "tail", "uid_drop_blockers",
]

FSIZE_LIMIT = 256 << 20
NOFILE_LIMIT = 1024


def kernel_support():
    """What this kernel offers this process, whatever a probe got: {"landlock": ABI version,
    "namespaces": whether mount and network namespaces can be made (CAP_SYS_ADMIN, or
    unprivileged user namespaces for a non-root process)}. Tests assert a wall held
    whenever this says it could."""
    def read(path, default):
        try:
            with open(path) as f:
                return f.read()
        except OSError:
            return default
    caps = next((ln.split()[1] for ln in read("/proc/self/status", "").splitlines()
                 if ln.startswith("CapEff:")), "0")
    admin = bool(int(caps, 16) >> 21 & 1)   # CAP_SYS_ADMIN
    userns = os.geteuid() != 0 and read("/proc/sys/user/max_user_namespaces", "0").strip() != "0" \
        and read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", "0").strip() != "1"
    return {"landlock": landlock_abi(), "namespaces": admin or userns}


# ---- network, rlimits -------------------------------------------------------------


def apply_netns():
    """Move the process into a fresh network namespace: no interfaces but a down lo."""
    if libc.unshare(CLONE_NEWNET) == 0:
        return True, ""
    first = errno_msg("unshare(CLONE_NEWNET)")
    if os.geteuid() != 0 and libc.unshare(CLONE_NEWUSER | CLONE_NEWNET) == 0:
        return True, "netns via user namespace"
    return False, first


def apply_rlimits(options):
    """Core, file size, fd, CPU (and, for non-root, process) limits; never RLIMIT_AS."""
    timeout = timeout_s(options)
    # RLIMIT_CPU counts CPU seconds, not wall time: 4x the wall limit leaves
    # room for several busy threads, the watchdog's wall clock decides first.
    cpu = int(max(60.0, 4 * timeout))
    limits = [(resource.RLIMIT_CORE, 0), (resource.RLIMIT_FSIZE, FSIZE_LIMIT),
              (resource.RLIMIT_NOFILE, NOFILE_LIMIT), (resource.RLIMIT_CPU, cpu)]
    if os.geteuid() != 0:
        limits.append(nproc_limit())
    failed = []
    for which, soft in limits:
        try:
            _, hard = resource.getrlimit(which)
            if hard != resource.RLIM_INFINITY:
                soft = min(soft, hard)
            resource.setrlimit(which, (soft, soft))
        except (OSError, ValueError) as e:
            failed.append(f"rlimit {which}: {e}")
    return not failed, "; ".join(failed)


def drop_capabilities():
    """Drop every capability (root stays uid 0 but loses CAP_SYS_ADMIN, CAP_KILL, ...)."""
    ok, msg = drop_bounding()
    if SYS_CAPSET is None:
        return False, "capset: unknown architecture"
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)   # _LINUX_CAPABILITY_VERSION_3, this process
    data = (ctypes.c_uint32 * 6)()                  # effective/permitted/inheritable, 2 words
    if libc.syscall(SYS_CAPSET, header, data) != 0:
        return False, errno_msg("capset")
    return ok, msg


# ---- the whole sandbox ----------------------------------------------------------------


def apply(tmpdir, options=None, *, drop_uid=False, mounts=None, tmpfs_mb=TMPFS_MB,
          extra_rules=(), uid=NOBODY, gid=NOBODY, keep_group=False, own_proc=False):
    """Sandbox the calling (child) process; returns what held, as a dict:

    netns, landlock, rlimits, caps_dropped, mountns, pgroup, procfs (bools); uid (the euid it
    ends with); uid_note (why a requested drop did not happen); tmpfs_mb; level ("full" when
    netns, landlock, rlimits and mountns held, and pgroup and procfs where asked for); detail
    (the walls that did not hold); landlock_note.

    mounts: None makes private /tmp and /dev/shm unless this process already sees the
    ones its judge made (private_mounts); False makes none (Landlock then denies the
    host's). drop_uid: become uid/gid (65534) when uid_drop_blockers() finds nothing
    and no probe() turned it off; otherwise stay uid 0 without capabilities. keep_group:
    the process and all it forks stay in its process group (kgharness.sandbox.pgroup; `pgroup`
    in the report, part of "full"): a runner's, whose group the judge stops. own_proc: a
    /proc listing no other process (kgharness.sandbox.procfs; `procfs`, part of "full"). The order
    matters: the namespaces, rlimits, chown and setuid need capabilities, so they come
    before the capabilities go. For the same reason a judge calls private_mounts, forks
    its runners and only then applies its own sandbox: its runners, forked after, would
    inherit its Landlock domain and its lack of capabilities (no uid drop, no netns)."""
    options = options or {}
    if mounts is False or private_active():
        mnt_ok = private_active()
        mnt_msg = "" if mnt_ok else "private /tmp and /dev/shm: not made here"
    else:
        mnt_ok, mnt_msg = private_mounts(tmpdir, tmpfs_mb)
    proc_ok, proc_msg = procfs.hide_others() if own_proc else (True, "")
    net_ok, net_msg = apply_netns()
    rl_ok, rl_msg = apply_rlimits(options)
    ll_ok, ll_msg = apply_landlock(tmpdir, extra_rules=extra_rules, private=mnt_ok)
    uid_note = ""
    if drop_uid:
        _, uid_note = apply_uid(tmpdir, uid, gid)
    cap_ok, cap_msg = drop_capabilities()
    pg_ok, pg_msg = pgroup.apply_keep_group() if keep_group else (True, "")
    missing = [m for ok, m in ((mnt_ok, mnt_msg + "; Landlock denies both" if mnt_msg else ""),
                               (proc_ok, proc_msg), (net_ok, net_msg), (ll_ok, ll_msg), (rl_ok, rl_msg),
                               (cap_ok, cap_msg), (pg_ok, pg_msg)) if not ok and m]
    full = net_ok and ll_ok and rl_ok and mnt_ok and pg_ok and proc_ok
    return {"netns": net_ok, "landlock": ll_ok, "rlimits": rl_ok, "caps_dropped": cap_ok,
            "pgroup": keep_group and pg_ok, "procfs": own_proc and proc_ok,
            "mountns": mnt_ok, "tmpfs_mb": private_mb() if mnt_ok else 0, "uid": os.geteuid(),
            "uid_note": uid_note, "level": "full" if full else "partial",
            "detail": "; ".join(missing), "landlock_note": ll_msg if ll_ok else ""}


def _cuda_check():
    """Initialise CUDA and run one tiny op; only ever in a forked probe child."""
    try:
        import torch
        torch.cuda.init()
        x = torch.ones(256, device="cuda")
        total = float((x + 1).sum().item())
        return {"ok": total == 512.0, "detail": torch.cuda.get_device_name()}
    except Exception as e:   # reported, never fatal: the probe says what failed
        return {"ok": False, "detail": f"{type(e).__name__}: {e}"[:400]}


def _probe_child(tmp_base, timeout_s, cuda, **kw):
    import json
    import select
    import shutil
    import tempfile
    import time
    tmpdir = tempfile.mkdtemp(prefix="kg-probe-", dir=tmp_base)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:   # probe child: never returns into the caller
        try:
            os.close(r)
            res = apply(tmpdir, {"timeout_s": max(10, timeout_s)}, **kw)
            res["cuda"] = _cuda_check() if cuda else None
            os.write(w, json.dumps(res).encode())
        finally:
            os._exit(0)
    os.close(w)
    data, deadline = b"", time.monotonic() + timeout_s
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([r], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                break
            chunk = os.read(r, 65536)
            if not chunk:
                break
            data += chunk
    finally:
        os.close(r)
        kill_pid(pid)
        os.waitpid(pid, 0)
        shutil.rmtree(tmpdir, ignore_errors=True)
    try:
        res = json.loads(data)
    except ValueError:
        res = {"netns": False, "landlock": False, "rlimits": False, "caps_dropped": False,
               "mountns": False, "pgroup": False, "procfs": False, "tmpfs_mb": 0, "uid": os.geteuid(), "uid_note": "",
               "level": "partial", "detail": "sandbox probe child did not report",
               "cuda": {"ok": False, "detail": "the probe child did not report"} if cuda else None}
    res.pop("landlock_note", None)
    return res


def probe(tmp_base=None, timeout_s=None, *, drop_uid=False, cuda=False, uid=NOBODY,
          gid=NOBODY, tmpfs_mb=TMPFS_MB):
    """Apply the sandbox in a throwaway forked child and report what held: apply()'s keys,
    plus uid_drop (whether runners should drop to uid: asked for, and it held) and cuda
    (None, or {"ok", "detail"}: CUDA initialised in the child under the full sandbox; this
    process stays CUDA-free). When CUDA fails only as uid, the drop is turned off, for
    this process's later children too, and uid_note says why."""
    timeout_s = timeout_s or (120.0 if cuda else 30.0)
    if drop_uid:
        uid_drop_blockers(uid, gid)   # here, once: the zygote's children inherit the answer
    # As a runner gets it: the process-group wall too, so CUDA is checked under it.
    kw = {"tmpfs_mb": tmpfs_mb, "uid": uid, "gid": gid, "keep_group": True}
    res = _probe_child(tmp_base, timeout_s, cuda, drop_uid=drop_uid, **kw)
    res["uid_drop"] = bool(drop_uid) and res.get("uid") == uid
    if res["uid_drop"] and cuda and not res["cuda"]["ok"]:
        plain = _probe_child(tmp_base, timeout_s, cuda, drop_uid=False, **kw)
        if plain["cuda"]["ok"]:
            res = dict(plain, uid_drop=False, uid_note=f"stays uid 0: CUDA failed as uid {uid} "
                       f"({res['cuda']['detail']}) and works as uid 0")
    if drop_uid and not res["uid_drop"]:
        refuse(uid, gid, res.get("uid_note") or "the probe could not drop the uid")
    return res


def main(argv=None):
    """Print the Landlock rules for a temp dir and what the sandbox probe finds here."""
    import argparse
    import json
    import tempfile
    ap = argparse.ArgumentParser(prog="python -m kgharness.sandbox", description=main.__doc__)
    ap.add_argument("--cuda", action="store_true", help="initialise CUDA in the probe child")
    ap.add_argument("--drop-uid", action="store_true", help=f"probe the drop to uid {NOBODY}")
    args = ap.parse_args(argv)
    base = tempfile.mkdtemp(prefix="kg-rules-")
    try:
        rules, dropped = landlock_rules(os.path.join(base, "job"), private=True)
        print("\n".join(describe_rules(rules)))
        print("left out:", ", ".join(dropped) or "nothing")
        if args.drop_uid:
            print(f"uid {NOBODY} cannot read:", uid_drop_blockers() or "nothing")
        print(json.dumps(probe(drop_uid=args.drop_uid, cuda=args.cuda), indent=1))
    finally:
        os.rmdir(base)
    return 0
