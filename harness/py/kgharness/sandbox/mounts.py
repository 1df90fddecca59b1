"""Each evaluation's own /tmp and /dev/shm, in a private mount namespace.

What a candidate writes to /tmp or /dev/shm must neither reach the host, nor the next
evaluation, nor escape the memory watchdog: tmpfs pages are in no process's RSS. So a
namespace of its own gets one size-limited tmpfs behind both, and everything written
there dies with the namespace's last process. Landlock then grants these (not the
host's) read-write; where no namespace can be made it denies both instead.
"""

import ctypes
import os
import sys
import stat

from .linux import (CLONE_NEWNS, CLONE_NEWUSER, MNT_DETACH, MS_BIND, MS_NOATIME, MS_NODEV,
                    MS_NODIRATIME, MS_NOEXEC, MS_NOSUID, MS_PRIVATE, MS_RDONLY, MS_REC,
                    MS_RELATIME, MS_REMOUNT, errno_msg, libc)
from .readpaths import read_paths

# The private /tmp and /dev/shm share one tmpfs of this size: tmpfs pages are in no
# process's RSS, so the zygote's memory watchdog does not see them; this bounds them.
TMPFS_MB = 256
TMPFS_INODES_PER_MB = 64   # empty files cost kernel memory too: 16k inodes for 256 MiB

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


def follow():
    """This process moved to a mount namespace of its own, copied from the one
    private_mounts made (kgharness.sandbox.procfs): the same /tmp and /dev/shm, still private."""
    if _private is not None and all(_ident(t) == ident for t, ident in _private["mounts"].items()):
        _private["ns"] = _mount_ns()


def private_mb():
    """The size of the tmpfs private_mounts made (inherited across forks), 0 when none."""
    return _private["mb"] if _private else 0


def _mount(src, target, fstype, flags, data=None):
    enc = (lambda s: None if s is None else os.fsencode(s))
    if libc.mount(enc(src), enc(target), enc(fstype), flags, enc(data)) != 0:
        raise OSError(ctypes.get_errno(), errno_msg(f"mount {target}"))


def _unshare_mountns():
    """A new mount namespace: directly with CAP_SYS_ADMIN, else inside a new user
    namespace mapping only our own uid/gid. Returns how, raises OSError."""
    if libc.unshare(CLONE_NEWNS) == 0:
        return ""
    first = errno_msg("unshare(CLONE_NEWNS)")
    if os.geteuid() == 0:   # root without CAP_SYS_ADMIN could not map itself anyway
        raise OSError(first)
    uid, gid = os.geteuid(), os.getegid()
    if libc.unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0:
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


def _links_under(targets):
    """Symbolic links under targets that the interpreter's own paths go through, as
    (link, where it points): sys.path, the prefixes and the harness package are named
    unresolved in every code object and import, so a venv reached through a link under
    /tmp (CI's clone has .venv -> ~/.cache/...) must still resolve under the tmpfs."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))    # kgharness, above sandbox/
    names = [sys.prefix, sys.exec_prefix, os.path.dirname(sys.executable), here] + [p for p in sys.path if p]
    links = []
    for name in names:
        cur = "/"
        for part in os.path.abspath(name).split("/")[1:]:
            cur = os.path.join(cur, part)
            if os.path.islink(cur) and any(cur.startswith(t + "/") for t in targets) and \
                    all(cur != link for link, _ in links):
                links.append((cur, os.readlink(cur)))
    return links


def _relink(links):
    for link, to in links:
        if not os.path.lexists(link):
            _mkdirs(os.path.dirname(link), 0o711)
            os.symlink(to, link)


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
    links = _links_under(targets)
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
        _relink(links)
        _private = {"ns": _mount_ns(), "mounts": {t: _ident(t) for t in targets}, "mb": size_mb}
    except OSError as e:
        for m in reversed(mounted):   # the host's /tmp again, rather than a half-built one
            libc.umount2(os.fsencode(m), MNT_DETACH)
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

