"""Admission by device memory: an evaluation starts its GPU work only when it fits.

Every evaluation on a GPU is two CUDA contexts (its runners), its exchange buffers in the
judge service (whose one context is outside every reservation) and what the task and
the candidate allocate. Once its runners have imported the task, the judge
asks the zygote for a reservation: its estimate from the task's shapes (a meta-device
pass) until an evaluation of the same task has measured what it used. The zygote grants
reservations in order of the evaluations' arrival (not of asking) while they fit the
GPU's budget; one that cannot fit beside anything runs alone. When the evaluation ends, its verdict's
`device_memory` is what the next evaluation of the task reserves. An evaluation retried
because it ran out of memory beside other work reserves more on its retry (at least half
the GPU, then all of it: alone), and only it: the same task and code. Another candidate's
evaluation of the task reserves what the task was measured to need, so one candidate that
runs out of memory (or says it did) does not leave its task running alone from then on.

The judge service's store of shared reference work (kgharness.judge.refstore) counts as the
bytes it holds (`stored`), not as a fixed slice of the budget.

The reference later (an evaluation whose task's reference work is shared): its candidate
is compared with the shared outputs and its reference runner only runs in the timing
window, so what the reference needs beyond its context (`later`) may wait. When the
whole reservation does not fit but the rest does, the zygote grants the rest alone and
the judge brings the reference in (`more`) only if the candidate is correct. A candidate
that fails never holds its reference's memory; one that passes holds it for its window
instead of its whole evaluation. Holders may owe only while what they hold and the
largest debt fit beside the store: whatever else runs, they can then be paid one after
another. `more` goes ahead of every new reservation, and when every holder waits for its
`more` (none will release: the store grew meanwhile) the first is granted anyway: an
out-of-memory error is retried, a deadlock would not end.

Contexts first (KERNELGATE_EARLY_CONTEXTS=on, the judge's choice): an evaluation may
reserve its runners' CUDA contexts alone (`contexts`), granted ahead of the queue
whenever they fit, and make them while it waits for the rest. Under load a context took
1.2-1.4 s to make (0.15 s alone, H200), inside the evaluation's admitted time. What it
holds for contexts is a down payment on its whole reservation.

Reference hosts (kgharness.zygote.refhosts): a task's reference runner kept warm and lent to
the judge whose window is open. What a host holds counts once (`host`), like the store;
an evaluation that borrows one reserves nothing for a reference of its own (`less`: at
its request, or given back after it was admitted). One that inherited a host which was
not ready when it asked names it (`host`): granted while that host is ready, it is
granted without its reference's share and owes it; its judge then borrows the host and
the debt is cancelled (`less`), or brings the share in (`more`) if the host went away.
A group's members that asked before its first member had made the host ready had to fit
whole, then gave the reference's share back at once: row_l3_norm's 51 GiB each, two at
a time, where 17 GiB each fitted beside the host (H200, 2026-12-03).

Pure bookkeeping: `grant(holder, mb, alone)` is the zygote's callback (False when the
holder is gone); mb is what was granted, which the judge splits among its processes.
"""

import collections
import hashlib
import time

from ..judge.reservation import CONTEXT_MB, measured_mb

MARGIN = 1.15             # measured footprints vary a little from run to run
BOOSTS_KEPT = 256         # retries' reservations remembered at once (the oldest go first)


def task_key(job):
    task = job.get("task") if isinstance(job, dict) else None
    src = task.get("source") if isinstance(task, dict) else None
    return hashlib.sha256((src or "").encode("utf-8", "replace")).hexdigest()[:24]


def code_key(job):
    """What tells one candidate of a task from another: a retry has its evaluation's code."""
    code = job.get("code") if isinstance(job, dict) else None
    return hashlib.sha256((code if isinstance(code, str) else "").encode("utf-8", "replace")).hexdigest()[:24]


class Boosts:
    """What an evaluation retried for running out of memory beside other work reserves on
    its retry, by task and code: half the GPU after the first error, all of it after the
    second. Only that retry: the task's other evaluations reserve what it was measured to
    need. The BOOSTS_KEPT latest are kept."""

    def __init__(self, budget_mb):
        self.budget, self.by = float(budget_mb), collections.OrderedDict()
        self.floors = {}          # holder -> the boost it asked with: a measure never sizes it below

    def get(self, key, code):
        return self.by.get((key, code), 0.0)

    def hold(self, who, key, code):
        if self.get(key, code):
            self.floors[who] = self.get(key, code)

    def floor(self, who):
        return self.floors.get(who, 0.0)

    def learn(self, key, code, oom, learned_mb, mb):
        """The evaluation of (key, code) ended; oom: it is to be retried, having used mb
        (0: unknown) of a task measured at learned_mb. Returns its retry's boost, or None."""
        had = max(self.by.pop((key, code), 0.0), learned_mb)
        if not oom:
            return None
        self.by[(key, code)] = boost = self.budget + 1 if had >= self.budget / 2 else \
            max(had, 1.5 * (mb or 0.0), self.budget / 2)
        while len(self.by) > BOOSTS_KEPT:
            self.by.popitem(last=False)
        return boost

    def release(self, who):
        self.floors.pop(who, None)


class Admission:
    def __init__(self, budget_mb, grant, clock=time.monotonic):
        self.budget, self.grant, self.clock = float(budget_mb), grant, clock
        self.held = {}                        # holder -> MiB
        self.queue = collections.deque()      # (holder, MiB, asked at)
        self.learned = {}                     # task key -> MiB measured
        self.asked = {}                       # holder -> its task's key
        self.boosts = Boosts(budget_mb)       # what a retry reserves, by task and code
        self.store_mb, self.store_version = 0.0, -1
        self.ctx = {}                         # holder -> MiB of contexts held ahead of the rest
        self.ctx_queue = collections.deque()  # (holder, MiB, asked at)
        self.learned_ref = {}                 # task key -> MiB its reference runner measured
        self.owed = {}                        # holder -> MiB of its reference, granted later
        self.more_queue = collections.deque() # (holder, asked at): holders bringing their reference in
        self.trace = None                     # trace(event, holder, fields): every change, for diagnosis
        self.hosts = {}                       # task key -> MiB a reference host holds
        self.without = {}                     # holder -> MiB of its reservation a host holds instead
        self.backed = {}                      # holder -> (its host's key, MiB that host would hold for it)
        self.squeeze = None                   # squeeze(MiB short): the store may give way (kgharness.zygote)

    def _note(self, event, who=None, **fields):
        if self.trace is not None:
            self.trace(event, who, dict(fields, used=round(self.used(), 1), store=round(self.store_mb, 1),
                                        owed=round(sum(self.owed.values()), 1), holders=len(self.held),
                                        queued=len(self.queue) + len(self.more_queue)))

    def poke(self):
        """Try the queue again (the zygote's watchdog, while the store may give way)."""
        self._grant_next()

    def trace_note(self, event, **fields):
        self._note(event, **fields)

    def _short(self, *sizes):
        """The next grant lacks room for any of sizes (MiB, the one preferred first): ask the
        shared store for what the first that it could cover misses (the store evicts what
        no evaluation is working on, then reports its size: stored)."""
        if self.squeeze is None:
            return
        for mb in sizes:
            short = self.used() + mb - self.budget if mb is not None else 0.0
            if 0 < short <= self.store_mb:
                self.squeeze(short)
                return

    def used(self):
        """MiB taken: the reservations, contexts held ahead of them, the shared store."""
        return sum(self.held.values()) + sum(self.ctx.values()) + self.store_mb + sum(self.hosts.values())

    def host(self, key, mb):
        """A reference host of the task holds mb MiB (0: it is gone)."""
        if not _valid_mb(mb, zero=True):
            return
        if mb:
            self.hosts[key] = float(mb)
        else:
            self.hosts.pop(key, None)
        self._note("host", key=key[:8], mb=round(float(mb), 1))
        self._grant_next()

    def hosted(self, key, ref_mb):
        """What an evaluation of the task does not reserve when a host is its reference:
        the reference's share (as `later` sizes it) and its context."""
        return self.later(key, ref_mb) + CONTEXT_MB

    def less(self, who, mb):
        """who, admitted with its reference's share, borrows a host instead: mb MiB go back
        (a debt for that share is cancelled instead)."""
        self.backed.pop(who, None)
        if who in self.owed:
            self.owed.pop(who)
            self.more_queue = collections.deque(q for q in self.more_queue if q[0] is not who)
        elif who in self.held:
            self.held[who] = max(0.0, self.held[who] - mb)
        else:
            return
        self.without[who] = mb
        self._note("less", who, mb=round(mb, 1))
        self._grant_next()

    def contexts(self, who, mb):
        """Queue who for mb MiB of CUDA contexts, ahead of every whole reservation."""
        if who in self.ctx or who in self.held or any(w is who for w, _, _ in self.ctx_queue):
            return
        self.ctx_queue.append((who, float(mb), self.clock()))
        self._grant_next()

    def stored(self, mb, version):
        """The shared store holds mb MiB as of its version-th change (reports can arrive out
        of order: the latest version wins)."""
        if not _valid_mb(mb, zero=True) or not isinstance(version, int) or isinstance(version, bool) \
                or version <= self.store_version:
            return
        self.store_mb, self.store_version = float(mb), version
        self._note("stored")
        self._grant_next()

    def need(self, key, estimate_mb, code=None):
        """What an evaluation of the task reserves: MARGIN times what its evaluations
        measured (their largest), else the estimate from its shapes. The measurement wins
        both ways: the estimate's factors (twice the reference's data for the reference,
        twice that for the candidate) held heavy evaluations to half the GPU they could
        share (H200: 8.4 s median wait for memory, at 22 GiB reserved for ~10 used). A
        candidate that needs more than the task's measure still has its cap; if the GPU is
        full at that moment, its out-of-memory error is retried (Judge.device_oom, Boosts)."""
        known = self.learned.get(key)
        return max(known * MARGIN if known else float(estimate_mb or 0.0), self.boosts.get(key, code))

    def later(self, key, estimate_mb):
        """What an evaluation of the task may bring in later: its reference runner's
        share beyond its context (MARGIN times the largest measured, else the estimate)."""
        known = self.learned_ref.get(key)
        mb = known * MARGIN if known else estimate_mb
        return float(mb) if _valid_mb(mb, zero=True) else 0.0

    def request(self, who, mb, key=None, later=0.0, without=0.0, host=None, hosted=0.0, code=None):
        """Queue who for mb MiB; with its task's key, a footprint measured meanwhile
        (measured) re-sizes the request, never below the boost of its code's retry (code:
        code_key). later: the part it can bring in afterwards (`more`), granted without it
        when only the rest fits. without: the part a reference host holds for it (hosted),
        never reserved. host, hosted: the key of a host it inherited that was not ready yet,
        and the part that host would hold for it: granted without that part (owed) if the
        host is ready by then."""
        if who in self.held or any(q[0] is who for q in self.queue):
            return
        if key is not None:
            self.asked[who] = key
            self.boosts.hold(who, key, code)
        if host is not None and _valid_mb(hosted):
            self.backed[who] = (host, float(hosted))
        if without:
            self.without[who] = float(without)
            mb = max(0.0, mb - without)
        self._enqueue((who, mb, self.clock(), float(later or 0.0)))
        self._note("request", who, mb=round(mb, 1), later=round(float(later or 0.0), 1))
        self._grant_next()

    def _enqueue(self, item):
        """In order of arrival at the zygote (a holder's t_recv), not of asking: the job
        queue hands out a trainer's groups one after another, so a group's last members
        go ahead of the next group's first even when one of those reached admission
        sooner (a slot freed early by a compile error started it while the group before
        still loaded). Holders without an arrival time queue last, in order of asking."""
        rank = getattr(item[0], "t_recv", None)
        if isinstance(rank, (int, float)):
            for i, q in enumerate(self.queue):
                r = getattr(q[0], "t_recv", None)
                if not isinstance(r, (int, float)) or r > rank:
                    self.queue.insert(i, item)
                    return
        self.queue.append(item)

    def more(self, who):
        """who, admitted without its reference, brings it in: granted ahead of every new
        reservation (at once when it owes nothing)."""
        if any(w is who for w, _ in self.more_queue):
            return
        if who not in self.owed:      # whatever it holds, it owes nothing: never left waiting
            self.grant(who, 0.0, False)
            return
        self.more_queue.append((who, self.clock()))
        self._grant_next()

    def owes(self, who):
        """True while who was admitted without its reference and has not brought it in."""
        return who in self.owed

    def release(self, who):
        self.asked.pop(who, None)
        self.boosts.release(who)
        self.without.pop(who, None)
        self.backed.pop(who, None)
        self.owed.pop(who, None)
        self.queue = collections.deque(q for q in self.queue if q[0] is not who)
        self.ctx_queue = collections.deque(q for q in self.ctx_queue if q[0] is not who)
        self.more_queue = collections.deque(q for q in self.more_queue if q[0] is not who)
        held, ctx = self.held.pop(who, None), self.ctx.pop(who, None)
        self._note("release", who, mb=round(held or 0.0, 1))
        if held is not None or ctx is not None:
            self._grant_next()

    def measured(self, key, mb):
        """A running evaluation of the task has been through its correctness trials and
        used mb MiB (its judge's word: kgharness.judge). A GRPO group arrives all at once,
        before any of its evaluations has ended, so without this every member reserved
        the shapes' estimate (heavy tasks: ~22 GiB for ~12 used, 10.5 s median wait for
        memory on an H200): its waiting members are re-sized now, and its running ones
        keep no more than the measure either (their runners' caps do not change)."""
        if not _valid_mb(mb):
            return
        self.learned[key] = max(self.learned.get(key, 0.0), float(mb))
        want = self.need(key, None)
        ours = {who for who, k in self.asked.items() if k == key}

        def size(who):
            return max(want, self.boosts.floor(who)) - self.without.get(who, 0.0)
        for who in ours & self.held.keys():
            self.held[who] = min(self.held[who], self.rest(who, size(who)))
        self._note("measured", key=key[:8], mb=round(float(mb), 1), want=round(want, 1))
        self.queue = collections.deque((who, max(0.0, size(who)) if who in ours else mb,
                                        asked, later) for who, mb, asked, later in self.queue)
        self._grant_next()

    def learn(self, key, verdict, oom=False, code=None):
        """An evaluation of the task ended with verdict; oom: it is to be retried (Boosts)."""
        mb = measured_mb(verdict)
        # Only a run that went through correctness used what the task needs: a candidate
        # that failed to compile would teach the next evaluation to reserve too little.
        full = isinstance(verdict, dict) and verdict.get("status") in ("correct", "incorrect", "reward_hack")
        if mb and full:
            self.learned[key] = max(self.learned.get(key, 0.0), mb)
        ref = verdict["device_memory"].get("reference_mb") if mb and full else None
        if _valid_mb(ref):
            self.learned_ref[key] = max(self.learned_ref.get(key, 0.0), float(ref))
        boost = self.boosts.learn(key, code, oom, self.learned.get(key, 0.0), mb)
        if boost:
            self._note("oom", key=key[:8], boost=round(boost, 1))

    def waiting_since(self, who):
        for w, asked in [(q[0], q[2]) for q in list(self.ctx_queue) + list(self.queue)] + list(self.more_queue):
            if w is who:
                return asked
        return None

    def rest(self, who, mb):
        """What a whole reservation of mb takes beyond the contexts who holds already."""
        return max(0.0, mb - self.ctx.get(who, 0.0))

    def _can_owe(self, first, later):
        """Whether one more holder may owe its reference: once every holder that owes
        nothing has released, what the owing ones hold plus the largest debt must fit,
        so that they can be paid one after another. Without it, candidates of a heavy
        task admitted without their references filled the GPU and each then waited for
        one that no longer fitted (H200, 85c2c7f: 5 of row_l3_norm's 15 GiB candidates
        at once, each owing 33 GiB; the guard below then granted one over the budget,
        and two evaluations ran out of memory)."""
        owing = sum(self.held[h] for h in self.owed) + first
        return owing + max([later, *self.owed.values()]) <= self.budget - self.store_mb - sum(self.hosts.values())

    def _backed(self, who):
        """What a ready host would hold for who (0.0 when it inherited none, or none is ready)."""
        host, mb = self.backed.get(who, (None, 0.0))
        return mb if host in self.hosts else 0.0

    def _waited(self, who, asked):
        stats = getattr(who, "lock_stats", None)
        if stats is not None:
            stats["mem_wait"] = stats.get("mem_wait", 0.0) + self.clock() - asked

    def _grant_next(self):
        # Contexts first: they are small, one set per evaluation, and made while it waits.
        while self.ctx_queue:
            who, mb, asked = self.ctx_queue[0]
            if (self.held or self.ctx) and self.used() + mb > self.budget:
                break
            self.ctx_queue.popleft()
            self._waited(who, asked)
            if self.grant(who, mb, False):
                self.ctx[who] = mb
        # A holder bringing its reference in is closer to releasing all it holds: nothing
        # new is granted before it (else small reservations could starve it).
        while self.more_queue:
            who, asked = self.more_queue[0]
            mb = self.owed[who]
            stuck = all(any(w is h for w, _ in self.more_queue) for h in self.held)
            if not stuck and self.used() + mb > self.budget:
                self._short(mb)
                return
            self.more_queue.popleft()
            self._waited(who, asked)
            del self.owed[who]
            if self.grant(who, mb, False):
                self.held[who] += mb
                self._note("more", who, mb=round(mb, 1), stuck=stuck)
        while self.queue:
            who, mb, asked, later = self.queue[0]
            rest = self.rest(who, mb)
            alone = not self.held
            first = rest - later if 0 < later < rest else None
            backed = self._backed(who)
            if 0 < backed < rest:
                # Its host is ready: it will borrow it, and what it owes is then cancelled.
                if not alone and self.used() + rest - backed > self.budget:
                    self._short(rest - backed)
                    return
                rest -= backed
                self.owed[who] = backed
            elif not alone and self.used() + rest > self.budget:
                if first is None or self.used() + first > self.budget or not self._can_owe(first, later):
                    self._short(rest, first)
                    return
                rest = first              # the reference comes later, if at all
                self.owed[who] = later
            self.queue.popleft()
            self._waited(who, asked)
            if self.grant(who, mb - self.owed.get(who, 0.0), alone and mb > self.budget):
                self.held[who] = rest
                self._note("grant", who, mb=round(rest, 1), owes=round(self.owed.get(who, 0.0), 1), alone=alone)
            else:
                self.owed.pop(who, None)


def _valid_mb(mb, zero=False):
    return isinstance(mb, (int, float)) and not isinstance(mb, bool) and (0 <= mb if zero else 0 < mb) and mb < 1e9
