"""The /proc wall: a runner sees itself and what it forks in /proc, never another process.

Another process's command line (the gateway's flags, a worker's) and, where ptrace
checks allow it, its environment are readable in the host's /proc by anyone. So each
runner mounts a procfs of its own on /proc, in a mount namespace of its own (copied
from its judge's, so the private /tmp and /dev/shm stay shared):

- As root (CAP_SYS_ADMIN over the host's PID namespace): `hidepid=invisible`, the
  per-mount option of Linux 5.8+. A process is listed only where the runner may ptrace
  it, which Landlock limits to its own sandbox and capabilities to processes that hold
  no more than it does (none: runners drop them all). `gid` names a group no process
  of the harness is in: by default root's group would see everything. Older kernels
  refuse the option (a hidepid there would change the host's own /proc): reported.
- Without root, a procfs of the host's PID namespace cannot be mounted from a user
  namespace, so the judge forks the runner into a PID namespace of its own (fork_runner)
  and the runner mounts that namespace's procfs: it holds the runner's processes alone.
  Not on a GPU: legacy CUDA IPC handles, with which the judge service lends its
  buffers, do not cross PID namespaces.

torch, Triton and CUDA read /proc/self/*, /proc/cpuinfo, /proc/meminfo, /proc/driver
and /proc/sys; those are the same in every procfs instance. Like every wall this one is
best effort: where it cannot be put up, the runner's sandbox report says why.
"""

import os

from .linux import CLONE_NEWNS, CLONE_NEWPID, MS_NODEV, MS_NOEXEC, MS_NOSUID, MS_PRIVATE, MS_REC, \
    PR_GET_CHILD_SUBREAPER, errno_msg, libc
from . import mounts

# A group nothing of the harness runs in: procfs shows every process to the members of
# its `gid` (root's group unless told otherwise).
SEE_ALL_GID = 0x7FFFFFFE


def _identity_userns():
    """Whether this process is in the initial user namespace (its uid map is the identity)."""
    try:
        with open("/proc/self/uid_map") as f:
            return f.read().split() == ["0", "0", "4294967295"]
    except OSError:
        return True


def own_pidns_wanted(mode):
    """Whether a runner forked now should get a PID namespace of its own: only where the
    hidepid mount cannot work (a user namespace of the judge's own, i.e. no root) and not
    on a GPU (CUDA IPC)."""
    return mode != "gpu" and not _identity_userns()


def _is_subreaper():
    import ctypes
    flag = ctypes.c_int(0)
    return libc.prctl(PR_GET_CHILD_SUBREAPER, ctypes.byref(flag), 0, 0, 0) == 0 and flag.value == 1


def fork_runner(mode):
    """os.fork() for a runner: 0 in the runner, its pid in the caller. Where
    own_pidns_wanted, the runner is the first process of a new PID namespace, made by a
    short-lived helper: a process without CAP_SYS_ADMIN over the host's PID namespace may
    create one but not return to its own, and its next runner must get another. The
    helper exits at once and the caller, a subreaper (the judge), inherits the runner."""
    if not own_pidns_wanted(mode) or not _is_subreaper():
        return os.fork()
    r, w = os.pipe()
    helper = os.fork()
    if helper == 0:          # the helper: it ends here, or returns as the runner
        pid = -1
        try:
            os.close(r)
            libc.unshare(CLONE_NEWPID)     # failing, the runner stays here: its mount says why
            pid = os.fork()
            if pid == 0:
                os.close(w)
        except BaseException:  # noqa: BLE001 - the caller hears of it as no pid
            pid = -1 if pid != 0 else os._exit(70)
        if pid == 0:
            return 0
        try:
            if pid > 0:
                os.write(w, str(pid).encode())
        finally:
            os._exit(0)
    os.close(w)
    data = b""
    while True:
        chunk = os.read(r, 32)
        if not chunk:
            break
        data += chunk
    os.close(r)
    os.waitpid(helper, 0)
    if not data.isdigit():
        raise OSError("procfs.fork_runner: the helper forked no runner")
    return int(data)


def hide_others():
    """Mount a procfs of this process's own on /proc, in a new mount namespace: (ok, detail).
    Call before Landlock (its rules open /proc) and while capabilities are still held."""
    if libc.unshare(CLONE_NEWNS) != 0:
        return False, "own /proc: " + errno_msg("unshare(CLONE_NEWNS)")
    mounts.follow()
    # Nothing mounted here may propagate to the namespace this one was copied from.
    if libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None) != 0:
        return False, "own /proc: " + errno_msg("mount --make-rprivate /")
    own_ns = os.getpid() == 1
    opts = "hidepid=invisible" if own_ns else f"hidepid=invisible,gid={SEE_ALL_GID}"
    if libc.mount(b"proc", b"/proc", b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, opts.encode()) != 0:
        return False, "own /proc: " + errno_msg(f"mount proc ({opts})")
    return True, "own /proc: " + ("a PID namespace of its own" if own_ns else "hidepid=invisible")
