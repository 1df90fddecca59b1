"""What a judge says on its private pipe (kgharness.pipe), and what the zygote does about it.

Every line is parsed in one place (pipe.parse); one that is not a record is ignored: the
judge's verdict, or its absence, decides the result. The verdict counts only with the
nonce the zygote gave the judge at fork, and only once (kgharness.zygote.outcome refuses
a forged one).
"""

import os
import time

from .. import pipe
from . import admission, watch


class Records:
    """The zygote's reader of every judge's pipe; `zygote` is the kgharness.zygote.loop.Zygote."""

    def __init__(self, zygote):
        self.zygote = zygote
        self.handlers = {
            pipe.Stage: self.stage, pipe.Precompiled: self.precompiled, pipe.Compiled: self.compiled,
            pipe.Lock: self.lock, pipe.Unlock: self.unlock, pipe.Reserve: self.reserve,
            pipe.ReserveLess: self.reserve_less, pipe.ReserveMore: self.reserve_more,
            pipe.HostAsk: self.host_ask, pipe.HostOk: self.host_ok, pipe.HostMem: self.host_mem,
            pipe.Launchers: self.launchers, pipe.Measured: self.measured, pipe.ShareKey: self.share_key,
            pipe.Stored: self.stored, pipe.Runner: self.runner, pipe.Verdict: self.verdict,
        }

    def read(self, child):
        """Everything the judge has written so far."""
        z = self.zygote
        while child.rec_r is not None:
            try:
                data = os.read(child.rec_r, 65536)
            except BlockingIOError:
                return
            if not data:     # every writer closed; the exit itself comes by SIGCHLD
                z.poll.unregister(child.rec_r)
                del z.by_fd[child.rec_r]
                os.close(child.rec_r)
                child.rec_r = None
                return
            for line in child.reader.feed(data):
                self.handle(child, line)

    def handle(self, child, line):
        rec = pipe.parse(line)
        if rec is not None:      # garbage from a child is ignored; its verdict decides
            self.handlers[type(rec)](child, rec)

    # ---- progress ----------------------------------------------------------------------
    def stage(self, child, rec):
        z = self.zygote
        child.stage, child.stage_t = rec.name, time.monotonic()
        if rec.name == "setup" and rec.t is not None and child.started_t is None:
            child.started_t = rec.t
        if rec.name == "precompile" and z.ahead:
            child.ahead = True
            watch.thaw([child], time.monotonic(), z.windows.waiting)

    def precompiled(self, child, rec):
        # Back from the compile: from here it may reach the GPU, so while a window is
        # open it stops before it reads the answer.
        child.ahead = False
        if self.zygote.windows.timing():
            watch.freeze([child], None, time.monotonic(), self.zygote.watchdog.scan)
        child.tell(pipe.GRANTED)

    def compiled(self, child, rec):
        child.compiled = True

    def runner(self, child, rec):
        if len(child.runners) < 2:
            child.runners.setdefault(rec.role, rec.pid)

    def verdict(self, child, rec):
        if rec.nonce != child.nonce:
            child.forged = "a verdict record without the judge's nonce arrived on the result pipe"
        elif child.verdict is not None:
            child.forged = "two verdict records arrived on the result pipe"
        else:
            child.verdict = rec.verdict

    # ---- the timing lock ---------------------------------------------------------------
    def lock(self, child, rec):
        self.zygote.windows.lock.request(child)

    def unlock(self, child, rec):
        self.zygote.windows.release(child)

    # ---- device memory -----------------------------------------------------------------
    def reserve(self, child, rec):
        memory = self.zygote.memory
        adm = memory.admission
        if adm is None:
            memory.grant(child, rec.mb, False)
        elif rec.contexts:     # its runners' contexts alone, ahead of the rest
            adm.contexts(child, rec.mb)
        else:
            key, code = admission.task_key(child.job), admission.code_key(child.job)
            host = child.host.key if child.host is not None and rec.host_mb > 0 else None
            adm.request(child, adm.need(key, rec.mb, code), key=key, code=code,
                        later=adm.later(key, rec.later_mb) if rec.later_mb else 0.0,
                        without=adm.hosted(key, rec.without_mb) if rec.without_mb else 0.0,
                        host=host, hosted=adm.hosted(key, rec.host_mb) if host else 0.0)

    def reserve_less(self, child, rec):
        adm = self.zygote.memory.admission
        if adm is not None and rec.mb > 0:
            adm.less(child, adm.hosted(admission.task_key(child.job), rec.mb))

    def reserve_more(self, child, rec):
        memory = self.zygote.memory
        if memory.admission is None:
            memory.grant(child, 0.0, False)
        else:
            memory.admission.more(child)

    def measured(self, child, rec):
        adm = self.zygote.memory.admission
        if adm is not None:
            adm.measured(admission.task_key(child.job), rec.mb)

    def stored(self, child, rec):
        adm = self.zygote.memory.admission
        if adm is not None:
            adm.stored(rec.mb, rec.version)

    def share_key(self, child, rec):
        child.share_key = rec.key

    # ---- reference hosts and launchers ---------------------------------------------------
    def host_ask(self, child, rec):
        hosts = self.zygote.hosts
        ask = hosts.ask(child, child.host, rec.shared) if hosts is not None else pipe.ASK_NONE
        child.tell(bytes([ask]))

    def host_ok(self, child, rec):
        if self.zygote.hosts is not None:
            self.zygote.hosts.ok(child, child.host, rec.mb)

    def host_mem(self, child, rec):
        if self.zygote.hosts is not None:
            self.zygote.hosts.measured(child.host, rec.mb)

    def launchers(self, child, rec):
        if self.zygote.launchers is not None:
            self.zygote.launchers.offer(rec.signatures)
