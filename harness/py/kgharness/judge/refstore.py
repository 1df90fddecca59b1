"""Trusted reference work shared across the evaluations of one task.

A GRPO group sends n completions for one task; without this, every evaluation's
reference runner rebuilt the same inputs and outputs for the same correctness seeds,
the judge screened them again, and every timing window timed the reference alone
again. Here the first evaluation of a task that completes its reference work
publishes it, and later evaluations of the same key compare their candidates with it:

- per correctness seed: the reference's outputs (tensors in the judge service, on the
  device; a judge that uses an entry holds its own references, so eviction never pulls
  outputs from under it),
  the inputs' checksum, and the output spec;
- per held-out input set: the same;
- the tolerance derived from seed 0, the task's minimum traffic (the too_fast floor)
  and the number of held-out sets;
- the reference timed alone on a quiet GPU (the "before" figure of the timing window),
  refreshed after BEFORE_TTL_S so that a GPU's drift over minutes is not carried.

Who may publish: only a judge, from its own fresh reference runner (a process that
never ran candidate code), after every screen passed. The entry is never lent to a
runner: candidates are compared with it in the judge service, and a verdict's speedup
still comes from the reference and the candidate timed in one window (only the
"before" cap on the reference is shared).

The key is the task source's hash and every option that changes the reference's
outputs or their screens; the store lives in the judge service, one per zygote, so a
new GPU, harness or toolchain (a new zygote) starts empty. Entries are evicted least
recently used beyond a byte budget; what the store holds counts against the GPU memory
that evaluations may reserve (the judge that publishes tells the zygote:
kgharness.zygote.admission.stored). An entry that judges still use is not
evicted: it would stay on the device for them, outside the store's count (such entries
are the likeliest part of what the judge service held beyond its count when the 7-task
mix ran the H200 out of memory: README, Measurements, fourth session). A publication
that would need one evicted is refused instead.

The store also gives way to evaluations waiting for device memory (trim, at the
zygote's request: kgharness.zygote.memory.Memory.squeeze): entries of tasks that no running
evaluation named, unused for TRIM_IDLE_S, go least recently used first. Kept until a
later publication needed the room, finished tasks' entries held 10-25 GiB through the
second half of a 7 x 16 heavy run while evaluations waited for memory (H200, 2026-12-03).
"""

import collections
import hashlib
import json
import threading
import time

from ..runner import taskinfo

BEFORE_TTL_S = 120.0
# An entry asked for this recently is kept by trim: its evaluation may not have told the
# zygote its key yet (kgharness.zygote.memory.Memory.squeeze).
TRIM_IDLE_S = 2.0
# Options whose values change what the reference's outputs are or how they are screened.
KEY_OPTIONS = ("seeds", "seed", "atol", "rtol", "copy_weights")


def key(job, opts):
    """The store key of an evaluation: its task source and the options above."""
    task = job.get("task") if isinstance(job, dict) else None
    src = task.get("source") if isinstance(task, dict) else None
    h = hashlib.sha256((src or "").encode("utf-8", "replace"))
    h.update(json.dumps({k: opts.get(k) for k in KEY_OPTIONS}, sort_keys=True).encode())
    return h.hexdigest()[:32]


class Entry:
    def __init__(self, desc, seeds, held):
        self.desc = desc                 # spec, tol, in_sums, held (specs, in_sums), min_bytes, held_count
        self.seeds = seeds               # per seed: the output leaves
        self.held = held                 # per held-out set: the output leaves
        self.before = None               # (stats, monotonic time measured)
        self.nbytes = sum(taskinfo.nbytes(ls) for ls in seeds + held)
        self.owners = set()              # the judges using it (get) that have not let go
        self.touched = 0.0               # when it was last published, asked for or taken


class Store:
    """Thread-safe: the judge service serves each judge on its own thread."""

    def __init__(self, budget_bytes, clock=time.monotonic):
        self.budget = int(budget_bytes)
        self.clock = clock
        self.lock = threading.Lock()
        self.entries = collections.OrderedDict()    # key -> Entry, least recently used first
        self.claims = {}                             # key -> the judge publishing it now
        self.refused = {}                            # key -> bytes of its last publication refused for room
        self.published = self.evicted = 0
        self.version = 0                             # one more at every change of held_bytes()

    def enabled(self):
        return self.budget > 0

    def claim(self, k, owner):
        """May owner publish k? One judge at a time does (the others of a group that start
        together do their own work without keeping copies of it)."""
        with self.lock:
            if not self.enabled() or k in self.entries or self.claims.get(k, owner) is not owner:
                return False
            # Refused for room before: no copies (outside every reservation) until there is room.
            if self.budget - self._in_use_bytes() < self.refused.get(k, 0):
                return False
            self.claims[k] = owner
            return True

    def release(self, owner):
        """owner's claims end, and the entries it used may be evicted again (the judge
        service calls this when owner's connection closes)."""
        with self.lock:
            for k in [k for k, o in self.claims.items() if o is owner]:
                del self.claims[k]
            for e in self.entries.values():
                e.owners.discard(owner)

    def put(self, k, desc, seeds, held):
        """Publish; False when sharing is off, the key is already there, or the entry
        does not fit the budget beside the entries judges are using."""
        e = Entry(desc, seeds, held)
        with self.lock:
            self.claims.pop(k, None)
            if not self.enabled() or k in self.entries:
                return False
            if self._in_use_bytes() + e.nbytes > self.budget:
                self.refused[k] = e.nbytes
                return False
            self.refused.pop(k, None)
            self._evict(self.budget - e.nbytes, lambda x, old: not old.owners)
            e.touched = self.clock()
            self.entries[k] = e
            self.published += 1
            self.version += 1
            return True

    def has(self, k):
        """Whether k is held now (the entry is not kept for the caller: it may be evicted)."""
        with self.lock:
            if k not in self.entries:
                return False
            self.entries.move_to_end(k)
            self.entries[k].touched = self.clock()
            return True

    def get(self, k, owner=None):
        """(description, per-seed leaves, per-held-out-set leaves) of entry k, or None. The
        caller keeps its own references; with an owner, the entry is not evicted until
        owner lets go (release)."""
        with self.lock:
            e = self.entries.get(k)
            if e is None:
                return None
            self.entries.move_to_end(k)
            e.touched = self.clock()
            if owner is not None:
                e.owners.add(owner)
            return dict(e.desc, before=self._recent_before(e)), list(e.seeds), list(e.held)

    def trim(self, target_bytes, keep=(), idle_s=TRIM_IDLE_S):
        """Evict entries, least recently used first, until the store holds at most
        target_bytes: only those no judge uses, whose key is not in keep (the tasks of the
        evaluations in flight) and that nobody asked for in the last idle_s seconds.
        Returns how many went."""
        keep, now = set(keep), self.clock()
        with self.lock:
            return self._evict(target_bytes, lambda x, e: not e.owners and x not in keep and now - e.touched >= idle_s)

    def _evict(self, target_bytes, may_go):
        """Evict entries for which may_go(key, entry) holds, least recently used first,
        until the store holds at most target_bytes (the caller holds the lock): how many
        went."""
        n = 0
        for x in [x for x, e in self.entries.items() if may_go(x, e)]:
            if self.held_bytes() <= target_bytes:
                break
            del self.entries[x]
            self.evicted += 1
            self.version += 1
            n += 1
        return n

    def before(self, k):
        """Entry k's reference timed alone, while recent, or None."""
        with self.lock:
            e = self.entries.get(k)
            before = self._recent_before(e) if e is not None else None
            if before is not None:
                e.touched = self.clock()
            return before

    def _recent_before(self, e):
        """e's reference-alone figure if measured within BEFORE_TTL_S, else None."""
        if e.before is not None and self.clock() - e.before[1] < BEFORE_TTL_S:
            return e.before[0]
        return None

    def set_before(self, k, stats):
        with self.lock:
            e = self.entries.get(k)
            if e is not None:
                e.before = (stats, self.clock())
                return True
            return False

    def held_bytes(self):
        return sum(e.nbytes for e in self.entries.values())

    def _in_use_bytes(self):
        """What no publication can evict: the entries running judges use."""
        return sum(e.nbytes for e in self.entries.values() if e.owners)

    def stats(self):
        with self.lock:
            return {"entries": len(self.entries), "in_use": sum(1 for e in self.entries.values() if e.owners),
                    "bytes": self.held_bytes(), "budget": self.budget,
                    "published": self.published, "evicted": self.evicted, "version": self.version}


STORE = Store(0)    # the judge service's; configure() sets its budget at start


def configure(budget_bytes):
    global STORE
    STORE = Store(budget_bytes)
    return STORE
