"""The sandbox of an evaluation's processes: namespaces, Landlock, rlimits, capabilities, uid.

Applied in forked children just before untrusted code can run (kgharness.child),
through raw syscalls via ctypes: the GPU image has no package manager and no
sandbox tool. apply() puts the walls up in this order (each needs the privileges
the next ones take away):

  private_mounts     a mount namespace where one size-limited tmpfs backs /tmp and
                     /dev/shm; the evaluation's temp dir is bound through. It dies with
                     the namespace's last process, and what was written there with it.
  apply_netns        a network namespace with nothing in it
  apply_rlimits      core, file size, fds, CPU
  apply_landlock     read-only: landlock_rules() (the interpreter and its packages, the
                     harness, the toolchain, a short /etc allowlist, /proc, /sys);
                     read-write: the temp dir, the private tmpfs, devices; no TCP, no
                     signals or abstract sockets outside the sandbox
  switch_uid         drop_uid=True: uid/gid 65534, when that uid can read all it needs
  drop_capabilities

Every layer is best effort: a layer that cannot be applied is reported (level
"partial", detail naming it), never fatal, because failing every evaluation is
worse than running one with fewer walls. The zygote adds what needs no privilege
at all: its own process-group watchdog. To see what a new host needs:
`python -m kgharness.sandbox [--cuda] [--drop-uid]` prints the rules and the probe.
"""

import ctypes
import glob
import os
import platform
import resource
import shutil
import stat
import sys

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mount.argtypes = (ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong,
                        ctypes.c_char_p)
_libc.umount2.argtypes = (ctypes.c_char_p, ctypes.c_int)
# Taken at import, in the zygote: the child has chdir'd into its temp dir by
# the time it applies the sandbox.
_ZYGOTE_CWD = os.path.realpath(os.getcwd())

CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWNET = 0x00020000, 0x10000000, 0x40000000
PR_SET_DUMPABLE, PR_CAPBSET_READ, PR_CAPBSET_DROP = 4, 23, 24
PR_SET_NO_NEW_PRIVS, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 38, 47, 4
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT = 1, 2, 4, 8, 32
MS_NOATIME, MS_NODIRATIME, MS_BIND, MS_REC = 1024, 2048, 4096, 16384
MS_PRIVATE, MS_RELATIME, MNT_DETACH = 1 << 18, 1 << 21, 2

# Syscall numbers: Landlock uses the generic table (same on x86_64 and aarch64).
SYS_LANDLOCK_CREATE_RULESET = 444
SYS_LANDLOCK_ADD_RULE = 445
SYS_LANDLOCK_RESTRICT_SELF = 446
SYS_CAPSET = {"x86_64": 126, "aarch64": 91}.get(platform.machine())

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

FSIZE_LIMIT = 256 << 20
NOFILE_LIMIT = 1024
MAX_PROCS = 64      # enforced by the zygote's watchdog (root ignores RLIMIT_NPROC)
NOBODY = 65534      # the uid and gid runners drop to (drop_uid=True)
# The private /tmp and /dev/shm share one tmpfs of this size: tmpfs pages are in no
# process's RSS, so the zygote's memory watchdog does not see them; this bounds them.
TMPFS_MB = 256
TMPFS_INODES_PER_MB = 64   # empty files cost kernel memory too: 16k inodes for 256 MiB

# Trees the evaluation reads: interpreter, libraries, the toolchain Triton runs on a
# GPU (cc, ld, as; ptxas is in triton's package), CUDA driver files, device and kernel
# info. /usr covers /usr/local/cuda, /usr/local/nvidia and /usr/lib/<arch>. Not /opt:
# whatever lives there and is needed comes in through sys.prefix (/opt/torch/.venv on
# the H200 image), the C compiler's prefix (CC=/opt/gcc/bin/gcc there), LD_LIBRARY_PATH,
# ld.so.conf or a TOOL_ENV variable.
SYSTEM_READ = (
    ("/usr", "interpreter, shared libraries, cc/ld/as for Triton's launcher stubs"),
    ("/lib", "shared libraries (a symlink to /usr/lib on merged-/usr hosts)"),
    ("/lib64", "the dynamic linker"),
    ("/bin", "tools found on PATH (a symlink to /usr/bin on merged-/usr hosts)"),
    ("/sbin", "ldconfig, which Triton runs (`ldconfig -p`) to find libcuda"),
    ("/proc", "cpu/memory info, /proc/devices and /proc/driver/nvidia for CUDA; other "
              "processes' private entries stay guarded by ptrace checks"),
    ("/sys", "CPU topology, NUMA nodes and PCI devices read by CUDA and torch"),
)
# /etc, file by file: never the directory (it holds shadow, gshadow, ssh host keys...).
# Measured with strace on `import torch, triton` + an interpreted kernel + `ldconfig -p`
# + cc building a Python extension.
ETC_READ = (
    ("/etc/ld.so.cache", "dynamic linker: dlopen by soname (libcuda.so.1) and `ldconfig -p`"),
    ("/etc/ld.so.conf", "GNU ld reads the library search config when cc links a stub"),
    ("/etc/ld.so.conf.d", "the files ld.so.conf includes"),
    ("/etc/ld.so.preload", "ld.so reads it at every exec (cc, ptxas): denied, it would "
                           "silently run them without the host's preloads"),
    ("/etc/nsswitch.conf", "glibc user and group lookups (getpass.getuser, Path.home)"),
    ("/etc/passwd", "getpwuid for the same lookups (no password hashes: those are in shadow)"),
    ("/etc/group", "getgrgid, the group side of the same lookups"),
    ("/etc/localtime", "time.localtime (log timestamps)"),
)
# Not /etc/alternatives: Landlock checks the file a symlink leads to, not the links on
# the way, so /usr/bin/cc -> /etc/alternatives/cc -> gcc runs with /usr alone.
# A rule may lie inside these but never be one of them or contain one.
NEVER = ("/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-", "/root", "/home")
# Tool locations Triton and CUDA take from the environment.
TOOL_ENV = ("TRITON_PTXAS_PATH", "TRITON_CUOBJDUMP_PATH", "TRITON_NVDISASM_PATH",
            "TRITON_LIBDEVICE_PATH", "TRITON_LIBCUDA_PATH", "CUDA_HOME", "CUDA_PATH")
# Extra read-only paths for a host that needs more (os.pathsep-separated); same guards.
EXTRA_READ_ENV = "KERNELGATE_SANDBOX_READ"
# Device files a child may read and write (and ioctl: the CUDA driver does).
DEV_FILES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty")
# What a GPU runner opens read-write; /dev/nvidia-caps is left to the probe's CUDA check.
NVIDIA_RW = ("nvidiactl", "nvidia-uvm")


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


# ---- what the evaluation may read ---------------------------------------------

def forbidden_dirs():
    """Directories no allowed path may contain or lie inside (the gateway's data)."""
    raw = os.environ.get("KERNELGATE_DATA_DIR", "")
    return [os.path.realpath(p) for p in raw.split(os.pathsep) if p]


def _inside(path, top):
    return path == top or path.startswith(top.rstrip("/") + "/")


def _overlaps(path, forbidden):
    return any(_inside(path, f) or _inside(f, path) for f in forbidden)


def _ld_conf_dirs(path="/etc/ld.so.conf", depth=0):
    """The library directories ld.so.conf names (following `include`)."""
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except OSError:
        return []
    out = []
    for line in lines:
        words = line.split("#", 1)[0].split()
        if words[:1] == ["include"] and depth < 4:
            for pat in words[1:]:
                for inc in sorted(glob.glob(os.path.join(os.path.dirname(path), pat))):
                    out += _ld_conf_dirs(inc, depth + 1)
        elif words and words[0].startswith("/"):
            out.append(words[0])
    return out


def _env_list(name, sep=os.pathsep):
    return [p for p in os.environ.get(name, "").split(sep) if p]


def _compiler_prefixes():
    """Where the C compiler Triton runs is installed (CC, else gcc or clang on PATH, as
    triton.runtime.build picks it): the prefix above its bin/, for cc1, as, ld and libs."""
    out = []
    for cc in [os.environ.get("CC"), os.environ.get("CXX"), shutil.which("gcc"), shutil.which("clang")]:
        found = shutil.which(cc) if cc else None
        if found:
            d = os.path.dirname(os.path.realpath(found))
            out.append(os.path.dirname(d) if os.path.basename(d) == "bin" and d != "/bin" else d)
    return out


def _read_candidates():
    """(path, why, listed) for every read-only grant before the guards; `listed` marks
    entries of search lists, where a relative entry means the zygote's cwd."""
    pkg = os.path.dirname(os.path.realpath(__file__))
    out = [(p, why, False) for p, why in SYSTEM_READ + ETC_READ]
    out += [(p, "python prefix", False) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)]
    out.append((pkg, "the harness package", False))
    out += [(p or ".", "sys.path", True) for p in sys.path]
    out += [(p, "LD_LIBRARY_PATH", True) for p in _env_list("LD_LIBRARY_PATH", ":")]
    out += [(p, "ld.so.conf", False) for p in _ld_conf_dirs()]
    out += [(p, "the C compiler Triton runs", False) for p in _compiler_prefixes()]
    out += [(os.environ[k], k, False) for k in TOOL_ENV if os.environ.get(k)]
    out += [(p, EXTRA_READ_ENV, True) for p in _env_list(EXTRA_READ_ENV)]
    return out


def _sealed(tmpdir):
    """Trees no rule may overlap: the data dirs and the base holding every evaluation's dir."""
    sealed = forbidden_dirs()
    if tmpdir:
        base = os.path.dirname(os.path.realpath(tmpdir))
        if base != "/":
            sealed.append(base)
    return sealed


def _refused(real, sealed):
    """Why `real` may not be granted, or ''."""
    if real == "/":
        return "the root"
    for n in NEVER:
        if _inside(n, real):
            return "holds " + n
    if _overlaps(real, sealed):
        return "overlaps a data dir or the evaluations' temp base"
    if os.path.isfile(os.path.join(real, "keys.json")):
        return "holds keys.json"
    return ""


def _read_rules(zygote_cwd=None, tmpdir=None):
    """([(path, why)], [dropped path]) for the read-only grants."""
    sealed = _sealed(tmpdir)
    cwd = os.path.realpath(zygote_cwd or _ZYGOTE_CWD)
    out, seen, dropped = [], set(), []
    for p, why, listed in _read_candidates():
        real = os.path.realpath(p)
        if real in seen or not os.path.exists(real) or (listed and real == cwd):
            continue
        seen.add(real)
        if _refused(real, sealed):
            dropped.append(real)
        else:
            out.append((real, why))
    return out, dropped


def read_paths(zygote_cwd=None, tmpdir=None):
    """Paths readable by the child, and those left out: overlapping a forbidden dir (or,
    given tmpdir, the base holding every evaluation's temp dir), holding /root or
    /etc/shadow. The zygote's cwd is left out of the search lists (it is wherever Go ran
    us from; the harness package itself is added explicitly)."""
    rules, dropped = _read_rules(zygote_cwd, tmpdir)
    return [p for p, _ in rules], dropped


def landlock_rules(tmpdir, extra_rules=(), private=None, zygote_cwd=None):
    """Every rule apply_landlock adds, as (path, access, why), and the paths left out.

    private: whether /tmp and /dev/shm are this evaluation's private tmpfs (granted
    read-write) or the host's (not granted at all); None asks private_active().
    extra_rules: (path, access) pairs, for diagnosis on a new host; same guards."""
    reads, dropped = _read_rules(zygote_cwd, tmpdir)
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
    rules.append((f"/proc/{os.getpid()}", READ_ONLY | FS_WRITE_FILE | FS_TRUNCATE,
                  "libcuda writes to its own /proc entries"))
    sealed = _sealed(tmpdir)
    for p, access in extra_rules:
        real = os.path.realpath(p)
        if _refused(real, sealed):
            dropped.append(real)
        else:
            rules.append((real, access, "extra_rules"))
    return rules, dropped


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
        if _libc.syscall(SYS_LANDLOCK_ADD_RULE, ruleset, 1, ctypes.byref(attr), 0) != 0:
            raise OSError(ctypes.get_errno(), _errno_msg(f"landlock_add_rule {path}"))
    finally:
        os.close(fd)


def apply_landlock(tmpdir, abi=None, scoped=None, net=None, extra_rules=(), private=None):
    """Restrict the calling process to landlock_rules(): read-only system trees, a short
    /etc allowlist, a writable tmpdir (and private tmpfs). scoped/net/extra_rules override
    the defaults (for diagnosis on new hosts)."""
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
        rules, dropped = landlock_rules(tmpdir, extra_rules, private)
        for path, access, _ in rules:
            _add_rule(ruleset, path, access & fs)
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
        note += "; not readable (data dir, temp base, /root, /etc/shadow): " + ", ".join(dropped)
    return True, note


# ---- private /tmp and /dev/shm ---------------------------------------------------

_private = None   # set by private_mounts: the namespace and the mounts it made (fork inherits it)


def _ident(path):
    st = os.stat(path)
    return st.st_dev, st.st_ino


def _mount_ns():
    return os.readlink("/proc/self/ns/mnt")


def private_active():
    """Whether this process sees the private /tmp and /dev/shm that private_mounts made
    (in it or in an ancestor it was forked from, e.g. the judge)."""
    if _private is None:
        return False
    try:
        return _mount_ns() == _private["ns"] and all(
            _ident(t) == ident for t, ident in _private["mounts"].items())
    except OSError:
        return False


def _mount(src, target, fstype, flags, data=None):
    enc = (lambda s: None if s is None else os.fsencode(s))
    if _libc.mount(enc(src), enc(target), enc(fstype), flags, enc(data)) != 0:
        raise OSError(ctypes.get_errno(), _errno_msg(f"mount {target}"))


def _unshare_mountns():
    """A new mount namespace: directly with CAP_SYS_ADMIN, else inside a new user
    namespace mapping only our own uid/gid. Returns how, raises OSError."""
    if _libc.unshare(CLONE_NEWNS) == 0:
        return ""
    first = _errno_msg("unshare(CLONE_NEWNS)")
    if os.geteuid() == 0:   # root without CAP_SYS_ADMIN could not map itself anyway
        raise OSError(first)
    uid, gid = os.geteuid(), os.getegid()
    if _libc.unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0:
        raise OSError(f"{first}; with a user namespace: {os.strerror(ctypes.get_errno())}")
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"),
                       ("gid_map", f"{gid} {gid} 1")):
        with open(f"/proc/self/{name}", "w") as f:
            f.write(text)
    return "in a user namespace"


def _mkdirs(path, mode):
    """mkdir -p with an exact mode (no umask): the intermediate dirs of a bound path."""
    if os.path.isdir(path):
        return
    _mkdirs(os.path.dirname(path), mode)
    os.mkdir(path)
    os.chmod(path, mode)


def _mount_flags(path):
    """The per-mount flags a read-only remount must keep (a user namespace may not clear them)."""
    f = os.statvfs(path).f_flag
    out = f & (MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_NOATIME | MS_NODIRATIME)
    return out | (MS_RELATIME if f & getattr(os, "ST_RELATIME", 4096) else 0)


def _layer(targets, size_mb, mounted):
    """One tmpfs, a 1777 subdir of it bound onto each target: one size limit for all."""
    base = targets[0]
    inodes = max(1024, size_mb * TMPFS_INODES_PER_MB)
    _mount("kgharness", base, "tmpfs", MS_NOSUID | MS_NODEV,
           f"size={size_mb}m,nr_inodes={inodes},mode=0755")
    mounted.append(base)
    for i in range(len(targets)):
        sub = os.path.join(base, f".kg{i}")
        os.mkdir(sub)
        os.chmod(sub, 0o1777)
    # The base last: once its own subdir covers it, the other subdirs are out of reach.
    for i in reversed(range(len(targets))):
        _mount(os.path.join(base, f".kg{i}"), targets[i], None, MS_BIND)
        mounted.append(targets[i])


def _bind_back(fd, path, rw, mounted):
    """Make `path` (hidden by the new tmpfs) visible again at the same place."""
    _mkdirs(os.path.dirname(path), 0o711)   # root's, in the tmpfs: traversable, not listable
    if not os.path.exists(path):
        if stat.S_ISDIR(os.stat(f"/proc/self/fd/{fd}").st_mode):
            os.mkdir(path, 0o700)
        else:
            os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
    _mount(f"/proc/self/fd/{fd}", path, None, MS_BIND)
    mounted.append(path)
    if not rw:
        _mount(None, path, None, MS_REMOUNT | MS_BIND | MS_RDONLY | _mount_flags(path))


def private_mounts(tmpdir, size_mb=TMPFS_MB, keep=None):
    """Give this process, and the processes it forks from now on, their own /tmp and
    /dev/shm: a new mount namespace (nothing propagates back: / is made recursively
    private) where one tmpfs of `size_mb` MiB in all (TMPFS_MB by default; tmpfs pages
    count in no RSS) backs both. They vanish with the namespace's last process.

    tmpdir: the evaluation's temp dir, or a list of them (the judge's and its runners'):
    bound back read-write where the tmpfs hides them. keep: paths to bind back
    read-only; None means every read_paths() entry (a venv under /tmp, say).
    Returns (ok, detail). Needs CAP_SYS_ADMIN or an unprivileged user namespace; where
    neither exists apply_landlock denies /tmp and /dev/shm instead."""
    global _private
    if private_active():
        return True, "private /tmp and /dev/shm already in place"
    dirs = [tmpdir] if isinstance(tmpdir, (str, bytes, os.PathLike)) else list(tmpdir)
    dirs = [os.path.realpath(d) for d in dirs]
    targets = []
    for t in ("/tmp", "/dev/shm"):
        real = os.path.realpath(t)
        if os.path.isdir(real) and real not in targets:
            targets.append(real)
    if not targets:
        return False, "no /tmp or /dev/shm to replace"
    if keep is None:
        keep = read_paths(tmpdir=dirs[0])[0]
    wanted = [(d, True) for d in dirs] + [(os.path.realpath(p), False) for p in keep]
    if any(d in targets for d in dirs):
        return False, f"the temp dir is {', '.join(targets)} itself"
    binds = [(p, rw) for p, rw in wanted if any(p.startswith(t + "/") for t in targets)]
    cwd = os.path.realpath(os.getcwd())
    fds, mounted = [], []
    try:
        how = _unshare_mountns()
        _mount(None, "/", None, MS_REC | MS_PRIVATE)
        for p, rw in binds:   # opened in the new namespace: a bind's source must be in it
            fds.append((os.open(p, os.O_PATH | os.O_CLOEXEC), p, rw))
        _layer(targets, size_mb, mounted)
        for fd, p, rw in fds:
            _bind_back(fd, p, rw, mounted)
        _private = {"ns": _mount_ns(), "mounts": {t: _ident(t) for t in targets}, "mb": size_mb}
    except OSError as e:
        for m in reversed(mounted):   # the host's /tmp again, rather than a half-built one
            _libc.umount2(os.fsencode(m), MNT_DETACH)
        return False, f"private /tmp and /dev/shm: {e}"
    finally:
        for fd, _, _ in fds:
            os.close(fd)
    if any(cwd.startswith(t + "/") for t in targets):
        try:
            os.chdir(cwd)   # the bound-back dir, not the host one under the tmpfs
        except OSError:
            pass
    detail = f"tmpfs of {size_mb} MiB on {' and '.join(targets)}"
    return True, detail + (f" ({how})" if how else "")


# ---- network, rlimits -------------------------------------------------------------

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
        limits.append(_nproc_limit())
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


def _nproc_limit():
    # Counts every process of the uid (the other children too), so leave headroom.
    return resource.RLIMIT_NPROC, _uid_procs() + 4 * MAX_PROCS


# ---- uid and capabilities ------------------------------------------------------------

_blockers = {}       # (uid, gid) -> uid_drop_blockers() of the python trees, computed once
_uid_verdicts = {}   # (uid, gid) -> why probe() turned the drop off


def _can(st, uid, gid, bits):
    """Mode-bit access for uid/gid without supplementary groups (ACLs not consulted)."""
    shift = 6 if st.st_uid == uid else 3 if st.st_gid == gid else 0
    return (st.st_mode >> shift) & bits == bits


def _closed_ancestor(path, uid, gid):
    """The first ancestor of path that uid/gid may not search, described, or ''."""
    a = path
    while a != "/":
        a = os.path.dirname(a)
        st = os.stat(a)
        if not _can(st, uid, gid, 1):
            return f"{a} (mode {stat.S_IMODE(st.st_mode):o}, owner {st.st_uid}: no search)"
    return ""


def _unreachable(top, uid, gid, limit, walk=True):
    """Why uid cannot read `top`: an ancestor it cannot search, or entries of the tree
    (only top itself without walk) it cannot read (directories need r+x, files r).
    Symlinks are judged where they lead."""
    closed = _closed_ancestor(top, uid, gid)
    if closed:
        return [closed]
    out, stack = [], [(top, os.stat(top))]
    while stack and len(out) < limit:
        path, st = stack.pop()
        is_dir = stat.S_ISDIR(st.st_mode)
        if not _can(st, uid, gid, 5 if is_dir else 4):
            out.append(f"{path} (mode {stat.S_IMODE(st.st_mode):o}, owner {st.st_uid})")
        elif is_dir and walk:
            try:
                with os.scandir(path) as it:
                    for e in it:
                        est = e.stat(follow_symlinks=False)
                        if stat.S_ISDIR(est.st_mode) or stat.S_ISREG(est.st_mode):
                            stack.append((e.path, est))
            except OSError as e:
                out.append(f"{path} ({e.strerror})")
    return out


_PYTHON_WHY = ("python prefix", "sys.path", "the harness package")


def _python_trees():
    """The trees a runner reads Python from: prefixes, sys.path, the harness package."""
    trees = sorted((p for p, why in _read_rules()[0] if why in _PYTHON_WHY), key=len)
    return [t for i, t in enumerate(trees) if not any(_inside(t, u) for u in trees[:i])]


def uid_drop_blockers(uid=NOBODY, gid=NOBODY, paths=None, limit=5):
    """What uid/gid could not read of what an evaluation needs ([] when nothing): every
    ancestor of the interpreter's prefixes, sys.path entries and the harness package must
    be searchable, the trees readable, the other read rules' top entries (/usr, the /etc
    files...) readable, the NVIDIA devices read-writable. A walk of
    site-packages takes a second or more: without `paths` the answer is computed once per
    process and inherited by forks (probe(drop_uid=True) computes it in the zygote)."""
    key = (uid, gid)
    if paths is None and key in _blockers:
        return _blockers[key]
    out = []
    for p in (paths if paths is not None else _python_trees()):
        if len(out) < limit and os.path.exists(p):
            out += _unreachable(os.path.realpath(p), uid, gid, limit - len(out))
    if paths is None:
        out += [w for p, why in _read_rules()[0] if why not in _PYTHON_WHY
                for w in _unreachable(p, uid, gid, 1, walk=False)]
    if os.path.isdir("/dev"):
        for n in sorted(os.listdir("/dev")):
            if n in NVIDIA_RW or (n.startswith("nvidia") and n[6:].isdigit()):
                st = os.stat("/dev/" + n)
                if not _can(st, uid, gid, 6):
                    out.append(f"/dev/{n} (mode {stat.S_IMODE(st.st_mode):o}: not read-write)")
    out = list(dict.fromkeys(out))[:limit]
    if paths is None:
        _blockers[key] = out
    return out


def _uid_refusal(tmpdir, uid, gid):
    """Why this process will not drop to uid, or '' when it can."""
    if os.geteuid() != 0:
        return f"not root: runs as uid {os.geteuid()} already"
    if (uid, gid) in _uid_verdicts:
        return _uid_verdicts[(uid, gid)]
    # The temp dir becomes uid's own, but its ancestors must let uid through.
    why = uid_drop_blockers(uid, gid) or [_closed_ancestor(os.path.realpath(tmpdir), uid, gid)]
    why = [w for w in why if w]
    return f"stays uid 0 (capabilities dropped): uid {uid} cannot read {'; '.join(why)}" if why else ""


def _chown_tree(top, uid, gid):
    os.chown(top, uid, gid, follow_symlinks=False)
    for root, dirs, files in os.walk(top):
        for n in dirs + files:
            os.chown(os.path.join(root, n), uid, gid, follow_symlinks=False)


def switch_uid(tmpdir, uid=NOBODY, gid=NOBODY):
    """Give the temp dir to uid/gid, then become them, with no supplementary groups.

    Needs root's CAP_CHOWN, CAP_SETGID, CAP_SETUID; the uid change empties the
    capability sets. It also makes the process non-dumpable, which gives its /proc
    entries to root: libcuda writes there (CUDA error 304 otherwise, seen on the H200),
    so dumpable is set back. Landlock keeps other sandboxes from ptracing it, and
    RLIMIT_CORE is 0."""
    _chown_tree(tmpdir, uid, gid)
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    if _libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), _errno_msg("prctl(PR_SET_DUMPABLE)"))


def _drop_bounding():
    """Empty the bounding and ambient sets (needs CAP_SETPCAP, so before switch_uid)."""
    kept = []
    for cap in range(64):
        held = _libc.prctl(PR_CAPBSET_READ, cap, 0, 0, 0)
        if held < 0:
            break   # EINVAL past the last capability the kernel knows
        if held and _libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            kept.append(cap)
    _libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    return not kept, f"bounding set keeps capabilities {kept}" if kept else ""


def drop_capabilities():
    """Drop every capability (root stays uid 0 but loses CAP_SYS_ADMIN, CAP_KILL, ...)."""
    ok, msg = _drop_bounding()
    if SYS_CAPSET is None:
        return False, "capset: unknown architecture"
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)   # _LINUX_CAPABILITY_VERSION_3, this process
    data = (ctypes.c_uint32 * 6)()                  # effective/permitted/inheritable, 2 words
    if _libc.syscall(SYS_CAPSET, header, data) != 0:
        return False, _errno_msg("capset")
    return ok, msg


def _apply_uid(tmpdir, uid, gid):
    """(dropped, note): switch_uid when it can be done, or why not."""
    why = _uid_refusal(tmpdir, uid, gid)
    if why:
        return False, why
    try:
        _drop_bounding()
        switch_uid(tmpdir, uid, gid)
        which, limit = _nproc_limit()
        resource.setrlimit(which, (limit, limit))
    except OSError as e:
        return os.geteuid() == uid, f"uid drop: {e}"
    return True, ""


# ---- the whole sandbox ----------------------------------------------------------------

def apply(tmpdir, options=None, *, drop_uid=False, mounts=None, tmpfs_mb=TMPFS_MB,
          extra_rules=(), uid=NOBODY, gid=NOBODY):
    """Sandbox the calling (child) process; returns what held, as a dict:

    netns, landlock, rlimits, caps_dropped, mountns (bools); uid (the euid it ends with);
    uid_note (why a requested drop did not happen); tmpfs_mb; level ("full" when netns,
    landlock, rlimits and mountns held); detail (the walls that did not hold);
    landlock_note.

    mounts: None makes private /tmp and /dev/shm unless this process already sees the
    ones its judge made (private_mounts); False makes none (Landlock then denies the
    host's). drop_uid: become uid/gid (65534) when uid_drop_blockers() finds nothing
    and no probe() turned it off; otherwise stay uid 0 without capabilities. The order
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
    net_ok, net_msg = apply_netns()
    rl_ok, rl_msg = apply_rlimits(options)
    ll_ok, ll_msg = apply_landlock(tmpdir, extra_rules=extra_rules, private=mnt_ok)
    uid_note = ""
    if drop_uid:
        _, uid_note = _apply_uid(tmpdir, uid, gid)
    cap_ok, cap_msg = drop_capabilities()
    missing = [m for ok, m in ((mnt_ok, mnt_msg + "; Landlock denies both" if mnt_msg else ""),
                               (net_ok, net_msg), (ll_ok, ll_msg), (rl_ok, rl_msg),
                               (cap_ok, cap_msg)) if not ok and m]
    full = net_ok and ll_ok and rl_ok and mnt_ok
    return {"netns": net_ok, "landlock": ll_ok, "rlimits": rl_ok, "caps_dropped": cap_ok,
            "mountns": mnt_ok, "tmpfs_mb": _private["mb"] if mnt_ok else 0, "uid": os.geteuid(),
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
               "mountns": False, "tmpfs_mb": 0, "uid": os.geteuid(), "uid_note": "",
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
    kw = {"tmpfs_mb": tmpfs_mb, "uid": uid, "gid": gid}
    res = _probe_child(tmp_base, timeout_s, cuda, drop_uid=drop_uid, **kw)
    res["uid_drop"] = bool(drop_uid) and res.get("uid") == uid
    if res["uid_drop"] and cuda and not res["cuda"]["ok"]:
        plain = _probe_child(tmp_base, timeout_s, cuda, drop_uid=False, **kw)
        if plain["cuda"]["ok"]:
            res = dict(plain, uid_drop=False, uid_note=f"stays uid 0: CUDA failed as uid {uid} "
                       f"({res['cuda']['detail']}) and works as uid 0")
    if drop_uid and not res["uid_drop"]:
        _uid_verdicts[(uid, gid)] = res.get("uid_note") or "the probe could not drop the uid"
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


if __name__ == "__main__":
    sys.exit(main())

