"""The zygote's watchdog tick (10 Hz while anything runs): every evaluation's processes
scanned, its deadlines and limits enforced (kgharness.zygote.watch), strays killed, and
processes left stopped by accident continued."""

import os
import signal
import time

from .. import procs
from . import watch
from .startup import log

HOST_RSS_LIMIT = 32 << 30     # a reference host's host memory, like a runner's default memory_limit_mb
# A precompile stage this long is logged once, with what its processes are doing: on an
# H200 a few heavy evaluations sat in it until the runner's wait (half the compile budget)
# ran out, their compile-only child stopped at birth (Watchdog.unstick); anything else that
# holds one there shows here.
SLOW_PRECOMPILE_S = 15.0


class Watchdog:
    """`zygote` is the Zygote; groups and stopped are procs.scan's last answer."""

    def __init__(self, zygote):
        self.zygote = zygote
        self.groups = {}               # procs.scan's last {leader: (pids, rss)}
        self.stopped = set()           # processes stopped by a signal at the last scan

    def tick(self):
        z = self.zygote
        if not z.children and not (z.hosts is not None and z.hosts.by_key):
            return
        now = time.monotonic()
        for pid in self.scan():   # escaped a finished evaluation and came to us: kill
            procs.kill_pid(pid)
        adm = z.memory.admission
        if z.hosts is not None:
            waiting = adm is not None and any(now - q[2] > 1.0 for q in adm.queue)
            z.hosts.tick(now, waiting, self.groups, (procs.MAX_PROCS, HOST_RSS_LIMIT),
                         [c.host for c in z.children.values() if c.host is not None])
        self.unstick()
        z.memory.poke(now)
        for child in list(z.children.values()):
            if child.kill_reason:
                procs.kill_group(child.pid, child.pids)   # a fork bomb may outrun one kill
                continue
            active = child.active_s(now, z.windows.waiting(child))
            if active > child.timeout_s:
                self.kill(child, "timeout", f"the evaluation exceeded its {child.timeout_s:g} s "
                          f"wall-clock limit during stage {child.stage}")
                continue
            budget = child.compile_budget_s
            if budget is not None and not child.compiled and active > budget:
                self.kill(child, "compile_timeout", f"loading and compiling the kernel (its import, Triton "
                          f"JIT and autotune, until its first call returned) exceeded the {budget:g} s "
                          f"compile budget (compile_timeout_s) during stage {child.stage}; fewer autotune "
                          f"configs or a smaller kernel compile faster")
                continue
            if child.ahead and not child.slow_logged and now - (child.stage_t or now) > SLOW_PRECOMPILE_S:
                child.slow_logged = True
                log(f"job {child.id} in stage precompile for {now - child.stage_t:.0f} s (load "
                    f"{procs.load()}): {procs.describe(child.pids, limit=24)}")
            bad = watch.check(child, child.by_role, child.output_limit)
            if bad:
                self.kill(child, *bad)

    def kill(self, child, status, feedback, task_error=""):
        if child.kill_reason is None:
            child.kill_reason = (status, feedback, task_error)
            if status in ("timeout", "compile_timeout"):   # where it was stuck, for whoever looks
                log(f"job {child.id} {status} in stage {child.stage}: {procs.describe(child.pids | child.leaders())}")
        procs.kill_group(child.pid, child.pids)
        for leader in child.leaders():
            procs.kill_group(leader)

    def unstick(self):
        """Continue what is stopped in an evaluation that should be running (neither stopped
        for a window nor the lock's holder, whose judge stops its own runners). A process
        that forks while its group is stopped and continued gets both signals and stays
        stopped (Linux hands a fork's child the group signals sent during the fork, and
        a continue does not cancel a stop still queued for it): on an H200, with reference
        hosts on, 7 of 448 heavy evaluations sat 45 s in their precompile stage with the
        compile-only child stopped at birth, after the zygote stopped an evaluation for
        a window and at once continued it (its stage record said precompile)."""
        z = self.zygote
        holder = z.windows.lock.held_by()
        for child in z.children.values():
            if child.frozen_since is not None or child is holder:
                continue
            left = child.pids & self.stopped
            if not left:
                continue
            if not child.unstuck_logged:     # once: a candidate may stop its own processes at will
                child.unstuck_logged = True
                log(f"job {child.id}: {len(left)} process(es) left stopped in stage {child.stage}, "
                    f"continued: {procs.describe(left)}")
            for pid in left:
                try:
                    os.kill(pid, signal.SIGCONT)
                except OSError:
                    pass

    def scan(self):
        """Refresh every child's processes and their split by role: the strays (see
        procs.scan), the judge service aside."""
        z = self.zygote
        leaders = z.hosts.pids() if z.hosts is not None else set()
        if z.launchers is not None:
            leaders |= z.launchers.pids()
        for c in z.children.values():
            leaders |= c.leaders()
        self.stopped = set()
        groups, strays = procs.scan(os.getpid(), leaders, self.stopped)
        self.groups = groups
        for c in z.children.values():
            c.by_role, c.pids = watch.roles(c, groups)
        return [pid for pid in strays if pid != z.memory.service.pid]
