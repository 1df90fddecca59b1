"""Dropping a runner from root to uid/gid 65534, when that uid can read what it needs.

Landlock and the namespaces leave a runner root, and root without capabilities still
owns root's files. Dropping the uid takes those away too, but a runner that cannot read
its interpreter or open the GPU would fail every evaluation, so the drop happens only
when uid_drop_blockers finds nothing in the way and no probe turned it off; otherwise
the runner stays uid 0 without capabilities, and says why.
"""

import ctypes
import os
import resource
import stat

from .linux import (PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, PR_CAPBSET_DROP, PR_CAPBSET_READ,
                    PR_SET_DUMPABLE, errno_msg, libc)
from ..procs import nproc_limit
from .readpaths import inside, read_rules

NOBODY = 65534      # the uid and gid runners drop to (drop_uid=True)
# What a GPU runner opens read-write; /dev/nvidia-caps is left to the probe's CUDA check.
NVIDIA_RW = ("nvidiactl", "nvidia-uvm")

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


# The `why` readpaths gives the trees Python is read from.
_PYTHON_WHY = ("python prefix", "sys.path", "the harness package")


def _python_trees():
    """The trees a runner reads Python from: prefixes, sys.path, the harness package."""
    trees = sorted((p for p, why in read_rules()[0] if why in _PYTHON_WHY), key=len)
    return [t for i, t in enumerate(trees) if not any(inside(t, u) for u in trees[:i])]


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
        out += [w for p, why in read_rules()[0] if why not in _PYTHON_WHY
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


def refuse(uid, gid, why):
    """Turn the drop to uid/gid off for this process and the children it forks from now on."""
    _uid_verdicts[(uid, gid)] = why


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
    if libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), errno_msg("prctl(PR_SET_DUMPABLE)"))


def drop_bounding():
    """Empty the bounding and ambient sets (needs CAP_SETPCAP, so before switch_uid)."""
    kept = []
    for cap in range(64):
        held = libc.prctl(PR_CAPBSET_READ, cap, 0, 0, 0)
        if held < 0:
            break   # EINVAL past the last capability the kernel knows
        if held and libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            kept.append(cap)
    libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    return not kept, f"bounding set keeps capabilities {kept}" if kept else ""


def apply_uid(tmpdir, uid, gid):
    """(dropped, note): switch_uid when it can be done, or why not."""
    why = _uid_refusal(tmpdir, uid, gid)
    if why:
        return False, why
    try:
        drop_bounding()
        switch_uid(tmpdir, uid, gid)
        which, limit = nproc_limit()
        resource.setrlimit(which, (limit, limit))
    except OSError as e:
        return os.geteuid() == uid, f"uid drop: {e}"
    return True, ""

