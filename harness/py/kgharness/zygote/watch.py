"""What the zygote watches in each evaluation, and how it stops all of them but one.

An evaluation is a tree of processes: the judge, its two runners, and whatever they
fork. The zygote attributes every process to its nearest known leader (the judge or a
runner; see procs.scan) and holds each role to the job's limits: the candidate's
side (its runner, and anything a candidate orphaned, which the judge, a subreaper,
inherits) and the reference's side separately. Nothing here trusts what the
evaluation says about itself.

While one evaluation holds the GPU's timing lock, the zygote stops (SIGSTOP) every
process of every other evaluation on that GPU and continues them afterwards; the time
spent stopped does not count against their timeouts.
"""

import os
import signal

from .. import procs

_PAGE = os.sysconf("SC_PAGE_SIZE")
LOGS = {"judge": "output.log", "reference": os.path.join("reference", "output.log"),
        "candidate": os.path.join("candidate", "output.log")}


def rss_of(pid):
    try:
        return int(procs.stat_fields(pid)[21]) * _PAGE
    except (TypeError, IndexError, ValueError):
        return 0


def roles(child, groups):
    """{"reference"|"candidate": (pids, rss)} for one evaluation, and all its pids."""
    j_pids, j_rss = groups.get(child.pid, (set(), 0))
    out = {}
    for role in ("reference", "candidate"):
        pid = child.runners.get(role)
        out[role] = groups.get(pid, (set(), 0)) if pid else (set(), 0)
    orphans = j_pids - {child.pid}
    if orphans:   # a runner's descendants that outlived their parent: the candidate's, by default
        pids, rss = out["candidate"]
        out["candidate"] = (pids | orphans, rss + max(0, j_rss - rss_of(child.pid)))
    every = set(j_pids)
    for pids, _ in out.values():
        every |= pids
    return out, every


def check(child, by_role, output_limit):
    """(status, feedback, task_error) when the evaluation must be killed, else None."""
    for role, (pids, rss) in by_role.items():
        who = _who(role)
        if len(pids) > procs.MAX_PROCS:
            why = f"{who} processes numbered more than {procs.MAX_PROCS} during stage {child.stage}"
        elif rss > child.memory_limit:
            why = (f"{who} processes used {rss >> 20} MiB of host memory, over the limit of "
                   f"{int(child.memory_limit) >> 20} MiB, during stage {child.stage}")
        else:
            why = _output_over(child, role, output_limit)
        if why:
            return _stop(role, why)
    return None


def output_check(child, output_limit):
    """check's output limit once more when the evaluation has ended: output written within
    one watchdog tick (a page cache takes gigabytes a second) is over the limit all the
    same, and the verdict must not depend on how fast the disk was."""
    for role in ("reference", "candidate"):
        why = _output_over(child, role, output_limit)
        if why:
            return _stop(role, why)
    return None


def _who(role):
    return "the candidate's" if role == "candidate" else "the reference's"


def _output_over(child, role, output_limit):
    if procs.file_size(os.path.join(child.tmpdir, LOGS[role])) > output_limit:
        return f"{_who(role)} stdout/stderr exceeded {int(output_limit)} bytes during stage {child.stage}; output capped"
    return None


def _stop(role, why):
    if role == "candidate":
        return "resource_limit", why, ""
    return "harness_error", f"task error: {why}", why


def signal_all(child, sig):
    host = child.loading_host()
    for leader in child.leaders() | ({host} if host else set()):
        try:
            os.killpg(leader, sig)
        except OSError:
            pass
    for pid in child.pids:
        try:
            os.kill(pid, sig)
        except OSError:
            pass


def freeze(children, holder, now, scan):
    """Stop every evaluation but the holder and those compiling ahead (`ahead`: CPU only,
    kgharness.runner.precompile). `scan()` refreshes each child's pids; it runs again after the
    first round so a process forked in between is stopped too."""
    others = [c for c in children if c is not holder and c.frozen_since is None and not c.ahead]
    for c in others:
        signal_all(c, signal.SIGSTOP)
        c.frozen_since = now
    if others:
        scan()
        for c in others:
            signal_all(c, signal.SIGSTOP)


def thaw(children, now, waiting=lambda c: None):
    """Continue children. The time each was stopped counts as frozen_s up to when it began
    waiting for memory or the lock (waiting(c), None when it is not): that time counts
    as the wait already (its verdict's lock_mem_wait, lock_wait; its timeout skips
    both). One granted while stopped counts all of it: its wait too, a little."""
    for c in children:
        if c.frozen_since is not None:
            signal_all(c, signal.SIGCONT)
            c.frozen_s = frozen_s(c, now, waiting(c))
            c.frozen_since = None


def frozen_s(c, now, waiting_since=None):
    """Seconds c was stopped for other evaluations' windows, the stop in progress
    included up to waiting_since (see thaw)."""
    if c.frozen_since is None:
        return c.frozen_s
    end = now if waiting_since is None else min(now, waiting_since)
    return c.frozen_s + max(0.0, end - c.frozen_since)
