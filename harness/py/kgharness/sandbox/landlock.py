"""The Landlock ruleset: the filesystem, network and signal wall that binds even root.

Namespaces need CAP_SYS_ADMIN or user namespaces, and root ignores file modes; Landlock
needs neither and binds every process forked after it, so it is what keeps a candidate
that runs as root from reading the gateway's data, the host's /tmp, /etc/shadow or
other evaluations' files, from opening TCP sockets, and from signalling processes
outside its sandbox. Which paths it grants comes from readpaths; this module turns
them into rules for the ABI this kernel offers.
"""

import ctypes
import os
import stat

from .linux import (PR_SET_NO_NEW_PRIVS, SYS_LANDLOCK_ADD_RULE, SYS_LANDLOCK_CREATE_RULESET,
                    SYS_LANDLOCK_RESTRICT_SELF, errno_msg, libc)
from .mounts import private_active
from .readpaths import read_rules, refused, sealed_trees

# Landlock filesystem rights, by the ABI that introduced them.
FS_EXECUTE, FS_WRITE_FILE, FS_READ_FILE, FS_READ_DIR = 1, 2, 4, 8
FS_ALL_ABI1 = (1 << 13) - 1          # execute .. make_sym
FS_REFER, FS_TRUNCATE, FS_IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
FS_EVERYTHING = (1 << 16) - 1        # masked by what the kernel handles
NET_BIND_TCP, NET_CONNECT_TCP = 1, 2  # ABI 4
SCOPE_ABSTRACT_UNIX, SCOPE_SIGNAL = 1, 2  # ABI 6

READ_ONLY = FS_EXECUTE | FS_READ_FILE | FS_READ_DIR
FILE_RIGHTS = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV
DEV_RW = READ_ONLY | FS_WRITE_FILE | FS_IOCTL_DEV

# Device files a child may read and write (and ioctl: the CUDA driver does).
DEV_FILES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty")


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64),
                ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1      # the kernel struct is __attribute__((packed))
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def landlock_abi():
    """The kernel's Landlock ABI version, 0 when Landlock is unavailable."""
    v = libc.syscall(SYS_LANDLOCK_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    return v if v > 0 else 0


def landlock_rules(tmpdir, extra_rules=(), private=None, zygote_cwd=None):
    """Every rule apply_landlock adds, as (path, access, why), and the paths left out.

    private: whether /tmp and /dev/shm are this evaluation's private tmpfs (granted
    read-write) or the host's (not granted at all); None asks private_active().
    extra_rules: (path, access) pairs, for diagnosis on a new host; same guards."""
    reads, dropped = read_rules(zygote_cwd, tmpdir)
    rules = [(p, READ_ONLY if os.path.isdir(p) else READ_ONLY & FILE_RIGHTS, why)
             for p, why in reads]
    rules.append((os.path.realpath(tmpdir), FS_EVERYTHING, "the evaluation's temp dir"))
    rules.append(("/dev", FS_READ_DIR, "device names"))
    devs = [d for d in DEV_FILES if os.path.exists(d)]
    if os.path.isdir("/dev"):
        devs += sorted("/dev/" + n for n in os.listdir("/dev") if n.startswith("nvidia"))
    rules += [(d, DEV_RW, "device") for d in devs]
    if private_active() if private is None else private:
        rules += [(t, FS_EVERYTHING, "the evaluation's private tmpfs")
                  for t in ("/tmp", "/dev/shm") if os.path.isdir(t)]
    # libcuda writes into its own /proc/PID (cudaGetDeviceCount fails with error 304
    # otherwise, seen on the H200 host); own entries only, never /proc/sys.
    rules.append((f"/proc/{_proc_pid()}", READ_ONLY | FS_WRITE_FILE | FS_TRUNCATE,
                  "libcuda writes to its own /proc entries"))
    sealed = sealed_trees(tmpdir)
    for p, access in extra_rules:
        real = os.path.realpath(p)
        if refused(real, sealed):
            dropped.append(real)
        else:
            rules.append((real, access, "extra_rules"))
    return rules, dropped


def _proc_pid():
    """This process's number in the procfs on /proc: not os.getpid() in a PID namespace of
    its own whose procfs is not mounted (kgharness.sandbox.procfs)."""
    try:
        own = os.readlink("/proc/self")
    except OSError:
        own = ""
    return own if own.isdigit() else str(os.getpid())


def compile_only_rules(tmpdir, writable):
    """The rules of a process that compiles a candidate's kernels ahead of its evaluation
    (kgharness.runner.precompile), a layer under its runner's: the runner's rules without the
    GPU's device files (no CUDA context, so no device memory outside admission), its
    temp dir read-only but for `writable` (the Triton cache, the compile's own files),
    and neither private tmpfs (nothing there for its runner to find)."""
    rules, dropped = landlock_rules(tmpdir, private=False)
    real = os.path.realpath(tmpdir)
    out = []
    for path, access, why in rules:
        if path.startswith("/dev/nvidia"):
            continue
        if path == real:
            access, why = READ_ONLY, "the evaluation's temp dir, read-only here"
        out.append((path, access, why))
    out += [(os.path.realpath(w), FS_EVERYTHING, "the compile's own files") for w in writable]
    return out, dropped


def describe_rules(rules):
    """One line per rule: rights, path, why (for logs and `python -m kgharness.sandbox`)."""
    names = ((FS_READ_FILE, "r"), (FS_WRITE_FILE, "w"), (FS_EXECUTE, "x"), (FS_READ_DIR, "l"),
             (FS_IOCTL_DEV, "i"), (FS_EVERYTHING & ~(READ_ONLY | FS_WRITE_FILE | FS_IOCTL_DEV
                                                     | FS_TRUNCATE), "c"))
    lines = []
    for path, access, why in rules:
        rights = "".join(c if access & bit else "-" for bit, c in names)
        lines.append(f"{rights}  {path}  ({why})")
    return lines


def _add_rule(ruleset, path, access):
    fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    try:
        if not stat.S_ISDIR(os.fstat(fd).st_mode):
            access &= FILE_RIGHTS     # directory rights on a file are EINVAL
        attr = _PathBeneath(access, fd)
        if libc.syscall(SYS_LANDLOCK_ADD_RULE, ruleset, 1, ctypes.byref(attr), 0) != 0:
            raise OSError(ctypes.get_errno(), errno_msg(f"landlock_add_rule {path}"))
    finally:
        os.close(fd)


def apply_landlock(tmpdir, abi=None, scoped=None, net=None, extra_rules=(), private=None, rules=None):
    """Restrict the calling process to landlock_rules(): read-only system trees, a short
    /etc allowlist, a writable tmpdir (and private tmpfs). scoped/net/extra_rules override
    the defaults (for diagnosis on new hosts); rules, as (rules, dropped), replaces them
    all (compile_only_rules)."""
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
    ruleset = libc.syscall(SYS_LANDLOCK_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), 0)
    if ruleset < 0:
        return False, errno_msg("landlock_create_ruleset")
    try:
        rules, dropped = rules or landlock_rules(tmpdir, extra_rules, private)
        for path, access, _ in rules:
            _add_rule(ruleset, path, access & fs)
        if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            return False, errno_msg("prctl(NO_NEW_PRIVS)")
        if libc.syscall(SYS_LANDLOCK_RESTRICT_SELF, ruleset, 0) != 0:
            return False, errno_msg("landlock_restrict_self")
    except OSError as e:
        return False, str(e)
    finally:
        os.close(ruleset)
    note = f"landlock abi {abi}"
    if dropped:
        note += "; not readable (data dir, temp base, /root, /etc/shadow): " + ", ".join(dropped)
    return True, note

