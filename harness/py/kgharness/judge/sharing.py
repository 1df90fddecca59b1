"""Reference work shared between evaluations of one task on one GPU: the outputs an
earlier evaluation published (kgharness.judge.refstore) and the warm reference runner the
zygote keeps for the task (a reference host, kgharness.zygote.refhosts), as one judge
finds, borrows and gives them back."""

import time

from .. import channel, pipe
from . import reservation


class SharedReference:
    """`judge` is the kgharness.judge.flow.Judge."""

    def __init__(self, judge):
        self.judge = judge
        # The shared reference work (kgharness.judge.refstore): the key, whether this GPU's
        # judge service shares at all, and the entry this evaluation uses (None: its own
        # reference runner does the work, and publishes it when complete).
        self.key, self.enabled, self.entry, self.publisher = None, False, None, False
        # The reference host: ASK_CREATE, this evaluation loads it and uses it as its
        # reference runner; ASK_USE (hosted), it borrows it in its window only.
        self.host_role, self.hosted, self.host_sound = pipe.ASK_NONE, False, False

    def find(self):
        """The entry, once admitted (it may have been published, or evicted, meanwhile)."""
        j = self.judge
        got = j.ops.shared(self.key)
        self.enabled = got.get("enabled") is True
        self.entry = got.get("entry") if isinstance(got.get("entry"), dict) else None
        self.publisher = got.get("publish") is True
        j.verdict["reference_shared"] = self.entry is not None
        # Published only once its screens passed (kgharness.judge.trials): the reference works.
        j.verdict["reference_checked"] = self.entry is not None
        if not j.gpu:
            j.memory.owed = self.entry is not None
        elif self.entry is None:
            j.memory.bring_reference_memory()    # evicted while it waited: its reference does the work

    def take_host(self):
        """The reference host, where the zygote offers it: a shared evaluation that was
        offered none before admission asks again (the host may have become ready while
        it waited) and gives back its reference's share; the evaluation that creates the
        host uses it instead of its own reference runner."""
        j = self.judge
        if not self.host_role and self.entry is not None:
            self.host_role = j.ctx.host_ask(True)
            self.hosted = self.host_role == pipe.ASK_USE
            if self.hosted and j.gpu:
                j.ctx.reserve_less(j.memory.ref_mb)
        if not self.host_role:
            return
        if self.hosted:
            j.memory.owed = False      # no reference of its own to bring in
        j.verdict["stage_ms"]["reference_host"] = float(self.host_role)
        if self.hosted and self.entry is None:
            j.retry("reference_host", "the shared reference work was evicted before this evaluation could use it")
        j.reference.kill()              # its own, forked for the task's description only
        if j.reference.cpu_s is not None:
            j.verdict["stage_ms"]["cpu_reference"] = round(j.reference.cpu_s * 1e3, 3)
        j.reference = None
        if self.host_role == pipe.ASK_CREATE:
            j.memory.bring_reference_memory()
            j.reference = j.ctx.host_proc()
            try:
                j.reference.hello()
            except (channel.ChannelClosed, channel.Malformed, TimeoutError) as e:
                j.retry("reference_host", f"a new reference host did not answer ({e})")

    def host_done(self):
        """The host this evaluation created is sound and needed here no more (after its
        window, else at its end): ready for the task's next evaluations, with none of this
        judge's buffers mapped."""
        if not self.host_sound:
            return
        self.host_sound = False
        j = self.judge
        j.reference.hello(timeout=5.0)
        j.ctx.host_ok(j.memory.peaks.get("reference", 0.0) + reservation.CONTEXT_MB)

    def borrow_host(self, trials):
        """Inside the window: the host answers this judge now (what an earlier borrower
        left is dropped), is loaded with the task this evaluation's shared work came from,
        and gets the reference's buffer."""
        j = self.judge
        t0 = time.monotonic()
        hp = j.ctx.host_proc()
        try:
            info = hp.hello()
        except (channel.ChannelClosed, channel.Malformed, TimeoutError) as e:
            hp.kill()
            j.retry("reference_host", f"the reference host did not answer ({e})")
        j.reference = hp
        if info.get("loaded") is not True:
            j.retry("reference_host", "the reference host was not loaded")
        if channel.held_count(info.get("held")) != self.entry.get("held_count"):
            j.task_fail("the reference host has another number of held-out input sets than "
                        "the evaluation whose work is shared")
        mb = info.get("min_bytes")
        j.min_bytes = mb if isinstance(mb, int) and not isinstance(mb, bool) and mb > 0 else None
        trials.ref_buf = trials.lend(hp, trials.spec)
        j.verdict["stage_ms"]["window_borrow"] = round((time.monotonic() - t0) * 1e3, 3)
        return hp

    def return_host(self, trials):
        """After a window that went through: the host lets the buffer go, and the zygote
        hears what it holds."""
        j = self.judge
        j.talk.ask(j.reference, "detach", buf=trials.ref_buf)
        if j.gpu and j.memory.peaks.get("reference"):
            j.ctx.host_mem(j.memory.peaks["reference"] + reservation.CONTEXT_MB)

    def bring_reference(self, trials):
        """The candidate passed against the shared outputs: the reference, loaded but idle
        so far, gets its memory and makes its first call (its one-time work: allocator,
        library handles, cuDNN's choices) before the window, where every other evaluation
        would wait for it."""
        j = self.judge
        j.stage("reference_later")
        j.memory.bring_reference_memory()
        trials.same_as_shared(j.talk.ask(j.reference, "call", inputs={"seed": j.rng.randrange(1 << 30)}, buf=None))
