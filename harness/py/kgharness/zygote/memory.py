"""Device memory, as the zygote shares it: admission (kgharness.zygote.admission) and the
judge service (kgharness.zygote.judgesvc), whose store of shared reference work gives way
to evaluations waiting for memory."""

import contextlib
import os
import select
import struct
import time

from .. import pipe
from . import admission, admissionlog, judgesvc
from .startup import log

# The shared store's trims (Memory.squeeze): one at a time, an answer awaited this long at
# most, and a pause after each (a trim that freed nothing is not asked again at once).
TRIM_ANSWER_S = 10.0
TRIM_GAP_S = 1.0


class Memory:
    """Admission by device memory (GPU mode; a budget of 0 admits everything at once) and
    the judge service; `zygote` is the Zygote."""

    def __init__(self, zygote, mode, device, memory_budget_mb=0.0, share_mb=0.0):
        self.zygote = zygote
        self.admission = admission.Admission(memory_budget_mb, self.grant) if memory_budget_mb > 0 else None
        if self.admission is not None:
            self.admission.squeeze = self.squeeze
            if os.environ.get(admissionlog.ENV):
                self.admission.trace = admissionlog.AdmissionLog(os.environ[admissionlog.ENV], memory_budget_mb)
        self.service = judgesvc.Service(mode, device, int(share_mb * (1 << 20)))
        self.service_fd = None         # the judge service's control socket, polled for its answers
        self.trim_sent = None          # when the last trim went to the judge service, until it answers
        self.trim_next = 0.0           # no trim before this (the zygote's clock)

    def fds(self):
        """Descriptors a process the zygote forks must close: the admission log's, the
        judge service's control socket."""
        fds = []
        if self.admission is not None and isinstance(self.admission.trace, admissionlog.AdmissionLog):
            fds.append(self.admission.trace.file.fileno())
        if self.service.ctrl is not None:
            fds.append(self.service.ctrl.fileno())
        return fds

    def grant(self, child, mb, alone):
        """Tell a judge its device memory is reserved: one byte (ALONE: and no other
        evaluation runs; OWED: without its reference, which it asks for later), then the
        MiB granted (8 bytes, a double): a pipe write this short is atomic."""
        # Alone in this zygote is alone on the GPU only if no other zygote shares it: what
        # the judge then makes of an out-of-memory error is the task's own fault.
        peers = self.zygote.windows.peers
        alone = alone and (peers is None or peers.alone_on_gpu())
        kind = pipe.ALONE if alone else pipe.OWED if self.admission is not None and self.admission.owes(child) \
            else pipe.GRANTED
        return child.tell(kind + struct.pack("<d", float(mb)))

    # ---- the judge service ---------------------------------------------------------------
    def start_service(self):
        """Fork the judge service (at start, and again if it dies)."""
        pid = self.service.start(close_fds=self.zygote.own_fds())
        self.service_fd = self.service.ctrl.fileno()
        self.zygote.poll.register(self.service_fd, select.POLLIN)
        self.trim_sent = None
        log(f"judge service started (pid {pid})")

    def read_service(self):
        rep = self.service.reply()
        if rep is None:
            return
        if rep.get("eof"):          # it is exiting: reap restarts it
            self.forget_service()
            return
        self.trim_sent, self.trim_next = None, time.monotonic() + TRIM_GAP_S
        if self.admission is not None:
            if isinstance(rep.get("evicted"), int) and rep["evicted"] > 0:
                self.admission.trace_note("trimmed", evicted=rep["evicted"])
            self.admission.stored(rep.get("mb"), rep.get("version"))

    def forget_service(self):
        if self.service_fd is not None:
            with contextlib.suppress(KeyError, ValueError):
                self.zygote.poll.unregister(self.service_fd)
            self.service_fd = None
        self.trim_sent = None

    # ---- the shared store gives way to evaluations waiting for memory ----------------------
    def squeeze(self, short_mb):
        """Admission's hook: the next reservation lacks short_mb MiB, no more than the shared
        store holds. The judge service evicts entries of tasks no evaluation here is
        working on (kgharness.judge.refstore.Store.trim) and answers with the store's new size.
        Kept until something needs the room, an entry saves a later group of its task
        the reference work; waiting for it, 4 of row_l3_norm's evaluations ran where 5
        fitted beside 25 GiB of finished tasks' outputs (H200, 2026-12-03)."""
        now = time.monotonic()
        if self.trim_sent is not None and now - self.trim_sent < TRIM_ANSWER_S:
            return
        if now < self.trim_next or self.admission is None:
            return
        target = max(0.0, self.admission.store_mb - short_mb) * (1 << 20)
        keep = {c.share_key for c in self.zygote.children.values() if c.share_key}
        if self.service.trim(target, keep):
            self.trim_sent = now

    def poke(self, now):
        """The watchdog's turn: a trim that freed nothing (an entry asked for just now) is
        tried again."""
        if self.admission is not None and self.admission.queue and self.trim_sent is None and now >= self.trim_next:
            self.admission.poke()
