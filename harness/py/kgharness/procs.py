"""Counting and killing processes: the zygote's watchdog, and the process limit a
non-root child gets.

Kept apart from the walls because it works from the other side of them: the walls go
up inside each child, while the zygote, root and unsandboxed, attributes every process
to the child it descends from and kills by process group. MAX_PROCS sizes both the
watchdog and the RLIMIT_NPROC headroom (nproc_limit). file_size and tail read what a
candidate wrote without following its links, because the reader is root.
"""

import os
import resource
import signal
import stat

MAX_PROCS = 64      # enforced by the zygote's watchdog (root ignores RLIMIT_NPROC)


def _uid_procs():
    uid, n = os.getuid(), 0
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                n += os.stat("/proc/" + d).st_uid == uid
            except OSError:
                pass
    return n


def leave_zygote(close_fds):
    """In a process the zygote just forked (a judge, the judge service, the launcher
    builder): close the zygote's descriptors and undo its signal handling (the wakeup
    pipe, SIGCHLD, SIGTERM and SIGINT handlers)."""
    signal.set_wakeup_fd(-1)
    for fd in close_fds:
        try:
            os.close(fd)
        except OSError:
            pass
    for sig in (signal.SIGCHLD, signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, signal.SIG_DFL)


def nproc_limit():
    # Counts every process of the uid (the other children too), so leave headroom.
    return resource.RLIMIT_NPROC, _uid_procs() + 4 * MAX_PROCS


# ---- the zygote's side: process-group accounting and kills -------------------
# Root ignores RLIMIT_NPROC and RSS has no rlimit, so the zygote polls /proc.

_PAGE = os.sysconf("SC_PAGE_SIZE")


def stat_fields(pid="self"):
    """/proc/<pid>/stat after the command name: index 0 is the state (stat(5) field 3), so
    field n is index n - 3. None when the process is gone or the line is unreadable."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat_line = f.read()
    except OSError:
        return None
    return stat_line[stat_line.rfind(b")") + 2:].split()


def describe(pids, limit=12):
    """'pid comm state wchan cpu=N t=S' for each of pids (at most limit): what a stuck
    evaluation's processes were doing, for the zygote's log. t is the CPU time it used
    (user and system), cpu the CPU it last ran on: a process that is runnable (R) with
    little CPU time waited for a CPU, one stopped (T) was signalled, one sleeping (S, D)
    waits on wchan."""
    out = []
    tick = os.sysconf("SC_CLK_TCK")
    for pid in sorted(pids)[:limit]:
        fields = stat_fields(pid)
        if fields is None:
            continue
        try:
            with open(f"/proc/{pid}/comm") as f:
                comm = f.read().strip()
            with open(f"/proc/{pid}/wchan") as f:
                wchan = f.read().strip() or "-"
        except OSError:
            comm, wchan = "?", "?"
        try:   # stat(5) fields 14, 15 (utime, stime) and 39 (processor)
            used = f" cpu={int(fields[36])} t={(int(fields[11]) + int(fields[12])) / tick:.2f}s"
        except (IndexError, ValueError):
            used = ""
        out.append(f"{pid} {comm} {fields[0].decode(errors='replace')} {wchan}{used}")
    return "; ".join(out)


def load():
    """/proc/loadavg's first three figures and its running/total processes, or '?'."""
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:4])
    except OSError:
        return "?"


def scan(zygote_pid, leaders, stopped=None):
    """Attribute every process to the child (group leader) it descends from.

    Returns ({leader: (pids, rss_bytes)}, strays). A process belongs to a child
    if it is in the child's process group or has the child as an ancestor (so
    setsid() does not hide it). A stray is a process reparented to the zygote
    (its subreaper) that is no child of ours: an escaped grandchild. stopped: a set
    to which every process stopped by a signal (state T) is added.
    """
    procs = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        fields = stat_fields(name)
        if fields is None:
            continue
        try:   # fields[1] ppid, [2] pgrp, [21] rss in pages (stat(5) fields 4, 5, 24)
            procs[int(name)] = (int(fields[1]), int(fields[2]), int(fields[21]))
        except (IndexError, ValueError):
            continue
        if stopped is not None and fields[0] == b"T":
            stopped.add(int(name))
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

