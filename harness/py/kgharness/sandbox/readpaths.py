"""What an evaluation may read, and what it never may, whatever a host adds.

One policy for three walls, so they cannot drift apart: Landlock grants these paths
read-only (landlock.landlock_rules), the private /tmp binds back the ones it would hide
(mounts.private_mounts), and the uid drop happens only when uid 65534 can read them
(uidrop.uid_drop_blockers). Every path, whatever brought it in (sys.path, an
environment variable, KERNELGATE_SANDBOX_READ), passes the same guards: never the
gateway's data dirs, the base holding every evaluation's temp dir, /root, /home or
/etc/shadow.
"""

import glob
import os
import shutil
import sys

# Taken at import, in the zygote: the child has chdir'd into its temp dir by
# the time it applies the sandbox.
_ZYGOTE_CWD = os.path.realpath(os.getcwd())

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
DATA_DIR_ENV = "KERNELGATE_DATA_DIR"
# The harness's settings as pin() found them: a runner drops them from its environment
# once its walls are up (kgharness.sandbox.runenv), and what it forks later (the precompile
# child) still builds its rules from them.
_pinned = None


def pin():
    """Keep this policy's settings as the environment has them now, for this process and
    what it forks, whatever the environment says later."""
    global _pinned
    _pinned = {k: os.environ.get(k, "") for k in (DATA_DIR_ENV, EXTRA_READ_ENV)}


def _setting(name):
    return _pinned[name] if _pinned is not None and name in _pinned else os.environ.get(name, "")


def forbidden_dirs():
    """Directories no allowed path may contain or lie inside (the gateway's data)."""
    raw = _setting(DATA_DIR_ENV)
    return [os.path.realpath(p) for p in raw.split(os.pathsep) if p]


def inside(path, top):
    return path == top or path.startswith(top.rstrip("/") + "/")


def _overlaps(path, forbidden):
    return any(inside(path, f) or inside(f, path) for f in forbidden)


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
    return [p for p in _setting(name).split(sep) if p]


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
    pkg = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))    # kgharness, above sandbox/
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


def sealed_trees(tmpdir):
    """Trees no rule may overlap: the data dirs and the base holding every evaluation's dir."""
    sealed = forbidden_dirs()
    if tmpdir:
        base = os.path.dirname(os.path.realpath(tmpdir))
        if base != "/":
            sealed.append(base)
    return sealed


def refused(real, sealed):
    """Why `real` may not be granted, or ''."""
    if real == "/":
        return "the root"
    for n in NEVER:
        if inside(n, real):
            return "holds " + n
    if _overlaps(real, sealed):
        return "overlaps a data dir or the evaluations' temp base"
    if os.path.isfile(os.path.join(real, "keys.json")):
        return "holds keys.json"
    return ""


def read_rules(zygote_cwd=None, tmpdir=None):
    """([(path, why)], [dropped path]) for the read-only grants."""
    sealed = sealed_trees(tmpdir)
    cwd = os.path.realpath(zygote_cwd or _ZYGOTE_CWD)
    out, seen, dropped = [], set(), []
    for p, why, listed in _read_candidates():
        real = os.path.realpath(p)
        if real in seen or not os.path.exists(real) or (listed and real == cwd):
            continue
        seen.add(real)
        if refused(real, sealed):
            dropped.append(real)
        else:
            out.append((real, why))
    return out, dropped


def read_paths(zygote_cwd=None, tmpdir=None):
    """Paths readable by the child, and those left out: overlapping a forbidden dir (or,
    given tmpdir, the base holding every evaluation's temp dir), holding /root or
    /etc/shadow. The zygote's cwd is left out of the search lists (it is wherever Go ran
    us from; the harness package itself is added explicitly)."""
    rules, dropped = read_rules(zygote_cwd, tmpdir)
    return [p for p, _ in rules], dropped

