"""The child's sandbox: network namespace, Landlock, rlimits, no capabilities.

Applied in the forked child just before the evaluator runs (kgharness.child),
through raw syscalls via ctypes: the GPU image has no package manager and no
sandbox tool. Every layer is best effort: a layer that cannot be applied is
reported (level "partial", detail naming it), never fatal, because failing
every evaluation is worse than running one with fewer walls. The zygote adds
what needs no privilege at all: its own process-group watchdog.
"""

import ctypes
import os
import platform
import resource
import stat
import sys

_libc = ctypes.CDLL(None, use_errno=True)
# Taken at import, in the zygote: the child has chdir'd into its temp dir by
# the time it applies the sandbox.
_ZYGOTE_CWD = os.path.realpath(os.getcwd())

CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
PR_SET_NO_NEW_PRIVS = 38
PR_CAPBSET_DROP = 24

# Syscall numbers: Landlock uses the generic table (same on x86_64 and aarch64).
SYS_LANDLOCK_CREATE_RULESET = 444
SYS_LANDLOCK_ADD_RULE = 445
SYS_LANDLOCK_RESTRICT_SELF = 446
SYS_CAPSET = {"x86_64": 126, "aarch64": 91}.get(platform.machine())

# Landlock filesystem rights, by the ABI that introduced them.
FS_EXECUTE, FS_WRITE_FILE, FS_READ_FILE, FS_READ_DIR = 1, 2, 4, 8
FS_ALL_ABI1 = (1 << 13) - 1          # execute .. make_sym
FS_REFER, FS_TRUNCATE, FS_IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
NET_BIND_TCP, NET_CONNECT_TCP = 1, 2  # ABI 4
SCOPE_ABSTRACT_UNIX, SCOPE_SIGNAL = 1, 2  # ABI 6

READ_ONLY = FS_EXECUTE | FS_READ_FILE | FS_READ_DIR
FILE_RIGHTS = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV

FSIZE_LIMIT = 256 << 20
NOFILE_LIMIT = 1024
MAX_PROCS = 64      # enforced by the zygote's watchdog (root ignores RLIMIT_NPROC)

# Top-level trees the evaluation must read: interpreter, libraries, CUDA driver
# files, device and kernel info. /usr covers /usr/local/cuda, /usr/lib/x86_64-linux-gnu.
SYSTEM_READ = ("/usr", "/lib", "/lib64", "/bin", "/sbin", "/etc", "/opt", "/proc", "/sys",
               "/usr/local/nvidia")
# Device files a child may read and write (and ioctl: the CUDA driver does).
DEV_FILES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty")


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64),
                ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1      # the kernel struct is __attribute__((packed))
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _errno_msg(what):
    e = ctypes.get_errno()
    return f"{what}: {os.strerror(e)}"


def landlock_abi():
    """The kernel's Landlock ABI version, 0 when Landlock is unavailable."""
    v = _libc.syscall(SYS_LANDLOCK_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    return v if v > 0 else 0


def forbidden_dirs():
    """Directories no allowed path may contain or lie inside (the gateway's data)."""
    raw = os.environ.get("KERNELGATE_DATA_DIR", "")
    return [os.path.realpath(p) for p in raw.split(os.pathsep) if p]


def _overlaps(path, forbidden):
    for f in forbidden:
        if path == f or path.startswith(f.rstrip("/") + "/") or f.startswith(path.rstrip("/") + "/"):
            return True
    return False


def read_paths(zygote_cwd=None):
    """Directories readable by the child, minus anything overlapping a forbidden dir.

    The zygote's cwd is left out of the sys.path entries (it is wherever Go ran
    us from; the harness package itself is added explicitly).
    """
    forbidden = forbidden_dirs()
    cwd = os.path.realpath(zygote_cwd or _ZYGOTE_CWD)
    pkg = os.path.dirname(os.path.realpath(__file__))
    out, dropped = [], []
    candidates = [(p, False) for p in SYSTEM_READ]
    candidates += [(p, False) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, pkg)]
    candidates += [(p or ".", True) for p in sys.path]
    for p, from_path in candidates:
        real = os.path.realpath(p)
        if not os.path.isdir(real) or real in out or real == "/":
            continue   # "/" would grant everything
        if from_path and real == cwd:
            continue
        if _overlaps(real, forbidden):
            dropped.append(real)
            continue
        out.append(real)
    return out, dropped


def _add_rule(ruleset, path, access):
    fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    try:
        attr = _PathBeneath(access, fd)
        if _libc.syscall(SYS_LANDLOCK_ADD_RULE, ruleset, 1, ctypes.byref(attr), 0) != 0:
            raise OSError(ctypes.get_errno(), _errno_msg(f"landlock_add_rule {path}"))
    finally:
        os.close(fd)


def apply_landlock(tmpdir, abi=None, scoped=None, net=None, extra_rules=()):
    """Restrict the calling process to read-only system trees and a writable tmpdir.

    scoped/net/extra_rules override the defaults (for diagnosis on new hosts)."""
    abi = abi or landlock_abi()
    if abi < 1:
        return False, "landlock unavailable"
    fs = FS_ALL_ABI1 | (FS_REFER if abi >= 2 else 0) | (FS_TRUNCATE if abi >= 3 else 0) \
        | (FS_IOCTL_DEV if abi >= 5 else 0)
    # ABI 4: TCP bind/connect handled with no rule allowing any port -> denied,
    # a second wall behind the network namespace. ABI 6: no signals to, and no
    # abstract sockets of, processes outside the sandbox (the zygote, Go).
    if net is None:
        net = (NET_BIND_TCP | NET_CONNECT_TCP) if abi >= 4 else 0
    if scoped is None:
        scoped = (SCOPE_ABSTRACT_UNIX | SCOPE_SIGNAL) if abi >= 6 else 0
    attr = _RulesetAttr(fs, net, scoped)
    size = 8 if abi < 4 else 16 if abi < 6 else 24
    ruleset = _libc.syscall(SYS_LANDLOCK_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), 0)
    if ruleset < 0:
        return False, _errno_msg("landlock_create_ruleset")
    try:
        paths, dropped = read_paths()
        for p in paths:
            _add_rule(ruleset, p, READ_ONLY & fs)
        _add_rule(ruleset, tmpdir, fs)
        _add_rule(ruleset, "/dev", FS_READ_DIR)
        devs = list(DEV_FILES)
        devs += ["/dev/" + n for n in os.listdir("/dev") if n.startswith("nvidia")]
        for d in devs:
            if os.path.isdir(d):
                _add_rule(ruleset, d, (READ_ONLY | FS_WRITE_FILE | FS_IOCTL_DEV) & fs)
            elif os.path.exists(d):
                _add_rule(ruleset, d, FILE_RIGHTS & fs)
        if os.path.isdir("/dev/shm"):
            _add_rule(ruleset, "/dev/shm", fs)   # torch/NCCL shared memory segments
        # libcuda writes into its own /proc/PID (cudaGetDeviceCount fails with
        # error 304 otherwise, seen on the H200 host); own entries only, never /proc/sys.
        _add_rule(ruleset, f"/proc/{os.getpid()}", (READ_ONLY | FS_WRITE_FILE | FS_TRUNCATE) & fs)
        for p, access in extra_rules:
            _add_rule(ruleset, p, access & fs)
        if _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            return False, _errno_msg("prctl(NO_NEW_PRIVS)")
        if _libc.syscall(SYS_LANDLOCK_RESTRICT_SELF, ruleset, 0) != 0:
            return False, _errno_msg("landlock_restrict_self")
    except OSError as e:
        return False, str(e)
    finally:
        os.close(ruleset)
    note = f"landlock abi {abi}"
    if dropped:
        note += "; not readable (overlap data dir): " + ", ".join(dropped)
    return True, note


def apply_netns():
    """Move the process into a fresh network namespace: no interfaces but a down lo."""
    if _libc.unshare(CLONE_NEWNET) == 0:
        return True, ""
    first = _errno_msg("unshare(CLONE_NEWNET)")
    if os.geteuid() != 0 and _libc.unshare(CLONE_NEWUSER | CLONE_NEWNET) == 0:
        return True, "netns via user namespace"
    return False, first


def apply_rlimits(options):
    """Core, file size, fd, CPU (and, for non-root, process) limits; never RLIMIT_AS."""
    timeout = _num(options.get("timeout_s"), 120.0)
    # RLIMIT_CPU counts CPU seconds, not wall time: 4x the wall limit leaves
    # room for several busy threads, the watchdog's wall clock decides first.
    cpu = int(max(60.0, 4 * timeout))
    limits = [(resource.RLIMIT_CORE, 0), (resource.RLIMIT_FSIZE, FSIZE_LIMIT),
              (resource.RLIMIT_NOFILE, NOFILE_LIMIT), (resource.RLIMIT_CPU, cpu)]
    if os.geteuid() != 0:
        # Counts every process of the uid (the other children too), so leave headroom.
        limits.append((resource.RLIMIT_NPROC, _uid_procs() + 4 * MAX_PROCS))
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
    for cap in range(64):
        if _libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            break   # EINVAL past the last capability the kernel knows
    if SYS_CAPSET is None:
        return False, "capset: unknown architecture"
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)   # _LINUX_CAPABILITY_VERSION_3, this process
    data = (ctypes.c_uint32 * 6)()                  # effective/permitted/inheritable, 2 words
    if _libc.syscall(SYS_CAPSET, header, data) != 0:
        return False, _errno_msg("capset")
    return True, ""


def apply(tmpdir, options=None):
    """Sandbox the calling (child) process. Order matters: unshare and the rlimits
    need capabilities, so they go first and the capabilities go last."""
    options = options or {}
    net_ok, net_msg = apply_netns()
    rl_ok, rl_msg = apply_rlimits(options)
    ll_ok, ll_msg = apply_landlock(tmpdir)
    cap_ok, cap_msg = drop_capabilities()
    missing = [m for ok, m in ((net_ok, net_msg), (ll_ok, ll_msg), (rl_ok, rl_msg)) if not ok]
    if not cap_ok:
        missing.append(cap_msg)
    full = net_ok and ll_ok and rl_ok
    detail = "; ".join(m for m in missing if m)
    return {"netns": net_ok, "landlock": ll_ok, "rlimits": rl_ok, "caps_dropped": cap_ok,
            "level": "full" if full else "partial", "detail": detail,
            "landlock_note": ll_msg if ll_ok else ""}


def probe(tmp_base=None, timeout_s=20.0):
    """Apply the sandbox in a throwaway forked child and report what held."""
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
            res = apply(tmpdir, {"timeout_s": 10})
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
        try:
            os.kill(pid, 9)
        except ProcessLookupError:
            pass
        os.waitpid(pid, 0)
        shutil.rmtree(tmpdir, ignore_errors=True)
    try:
        res = json.loads(data)
    except ValueError:
        res = {"netns": False, "landlock": False, "rlimits": False,
               "level": "partial", "detail": "sandbox probe child did not report"}
    res.pop("landlock_note", None)
    return res


def _num(v, default):
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0 else default


def _uid_procs():
    uid, n = os.getuid(), 0
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                n += os.stat("/proc/" + d).st_uid == uid
            except OSError:
                pass
    return n


# ---- the zygote's side: process-group accounting and kills -------------------
# Root ignores RLIMIT_NPROC and RSS has no rlimit, so the zygote polls /proc.

_PAGE = os.sysconf("SC_PAGE_SIZE")


def scan(zygote_pid, leaders):
    """Attribute every process to the child (group leader) it descends from.

    Returns ({leader: (pids, rss_bytes)}, strays). A process belongs to a child
    if it is in the child's process group or has the child as an ancestor (so
    setsid() does not hide it). A stray is a process reparented to the zygote
    (its subreaper) that is no child of ours: an escaped grandchild.
    """
    procs = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2:].split()
        try:   # fields[1] ppid, [2] pgrp, [21] rss in pages (stat(5) fields 4, 5, 24)
            procs[int(name)] = (int(fields[1]), int(fields[2]), int(fields[21]))
        except (IndexError, ValueError):
            continue
    groups = {leader: (set(), 0) for leader in leaders}
    strays = []
    for pid, (ppid, pgrp, rss) in procs.items():
        owner, p = None, pid
        for _ in range(64):   # walk up the ancestors until a child or the zygote
            if p in leaders:
                owner = p
                break
            info = procs.get(p)
            if info is None:
                break
            if info[1] in leaders:
                owner = info[1]
                break
            if info[0] in (0, 1, zygote_pid):
                break
            p = info[0]
        if owner is not None:
            pids, total = groups[owner]
            pids.add(pid)
            groups[owner] = (pids, total + rss * _PAGE)
        elif ppid == zygote_pid and pid not in leaders:
            strays.append(pid)
    return groups, strays


def kill_pid(pid):
    try:
        os.kill(pid, 9)
    except OSError:
        pass


def kill_group(leader, pids=()):
    """SIGKILL the child's process group and every process last attributed to it."""
    try:
        os.killpg(leader, 9)
    except OSError:
        pass
    for pid in pids:
        kill_pid(pid)


def file_size(path):
    try:
        return os.lstat(path).st_size
    except OSError:
        return 0


def tail(path, limit):
    """The last `limit` bytes of a file the candidate wrote, as text.

    The candidate owns the directory and the zygote reading it is root and unsandboxed:
    a symlink there (to /etc/shadow, say), a hard link or a FIFO (which would block the
    zygote) yields '' instead of being followed."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return ""
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1:
            return ""
        os.lseek(fd, max(0, st.st_size - limit), os.SEEK_SET)
        return os.read(fd, limit).decode("utf-8", "replace")
    except OSError:
        return ""
    finally:
        os.close(fd)

