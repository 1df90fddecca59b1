"""A zygote's base directory, and the ones dead zygotes left behind.

A zygote removes its base (every evaluation's temp dir, the trusted Triton cache, the
launcher staging, the reference hosts' dirs) when it shuts down. One that is killed
cannot: CI runs left 51 of them in /tmp in a day, and a server whose zygote is restarted
after a crash would gather one per restart. So a zygote holds an flock on its base while
it lives (its children close the descriptor: an flock belongs to the open file, and a
process running task code could release it), and a starting zygote removes every base in
the same parent directory whose lock it can take. What a dead zygote's orphans still
run can report to nobody. A lock, not the pid in the name: a live zygote in another pid
namespace sharing the directory looks dead by pid, but still holds its lock.
"""

import fcntl
import os
import re
import shutil
import tempfile

LOCK = ".alive"
_NAME = re.compile(r"^kgz-\d+-[A-Za-z0-9_]+$")


def make(tmp_base):
    """A new base for this zygote under tmp_base (None: the system's temp dir), locked:
    (path, the lock's descriptor, to keep open for the zygote's life)."""
    base = tempfile.mkdtemp(prefix=f"kgz-{os.getpid()}-", dir=tmp_base)
    # Locked under another name, then renamed: another zygote's sweep never finds an
    # unlocked lock file in a base that is alive.
    tmp = os.path.join(base, LOCK + ".new")
    fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    os.rename(tmp, os.path.join(base, LOCK))
    return base, fd


def sweep(tmp_base, own):
    """Remove the bases under tmp_base that no live process holds. A base without a lock
    file (from before the lock, or half made) is left alone. Returns the paths removed."""
    parent = tmp_base or tempfile.gettempdir()
    removed = []
    try:
        names = os.listdir(parent)
    except OSError:
        return removed
    for name in names:
        path = os.path.join(parent, name)
        if not _NAME.match(name) or os.path.realpath(path) == os.path.realpath(own) or os.path.islink(path):
            continue
        try:
            fd = os.open(os.path.join(path, LOCK), os.O_RDWR | os.O_NOFOLLOW)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)          # held: its zygote, or a process it forked, is alive
            continue
        try:
            shutil.rmtree(path, ignore_errors=True)
        finally:
            os.close(fd)
        if not os.path.exists(path):
            removed.append(path)
    return removed
