"""Admission by device memory: an evaluation starts its GPU work only when it fits.

Every evaluation on a GPU is three CUDA contexts (judge and two runners) plus what the
task and the candidate allocate. Once its runners have imported the task, the judge
asks the zygote for a reservation: its estimate from the task's shapes (a meta-device
pass), or what an earlier evaluation of the same task measured, whichever is larger.
The zygote grants reservations in FIFO order while they fit the GPU's budget; one that
cannot fit beside anything runs alone. When the evaluation ends, its verdict's
`device_memory` is what the next evaluation of the task reserves.

Pure bookkeeping: `grant(holder, alone)` is the zygote's callback (False when the
holder is gone).
"""

import collections
import hashlib
import time

CONTEXT_MB = 640          # one CUDA context with torch's handles (measured on an H200: 618 MiB)
DEFAULT_MB = 8192         # a task whose shapes the meta pass could not find
MARGIN = 1.15             # measured footprints vary a little from run to run


def task_key(job):
    task = job.get("task") if isinstance(job, dict) else None
    src = task.get("source") if isinstance(task, dict) else None
    return hashlib.sha256((src or "").encode("utf-8", "replace")).hexdigest()[:24]


def estimate_mb(info, check=False):
    """A first guess from one forward call's shapes: each runner holds its inputs,
    parameters and about twice its outputs; the judge, three outputs and its bandwidth
    probe; three contexts (one and two for a task check). None when the shapes are
    unknown."""
    parts = [info.get(k) for k in ("input_bytes", "param_bytes", "output_bytes")]
    if any(not isinstance(p, int) for p in parts):
        return None
    ins, params, outs = parts
    runner = ins + params + 2 * outs
    runners = 1 if check else 2
    judge = 3 * outs + (512 << 20)
    return (runners * runner + judge) / (1 << 20) + (runners + 1) * CONTEXT_MB


def measured_mb(verdict):
    mem = verdict.get("device_memory") if isinstance(verdict, dict) else None
    if not isinstance(mem, dict):
        return None
    parts = [mem.get(k) for k in ("reference_mb", "candidate_mb", "judge_mb")]
    if not all(isinstance(p, (int, float)) for p in parts) or not any(parts):
        return None
    return sum(parts) + 3 * CONTEXT_MB


class Admission:
    def __init__(self, budget_mb, grant, clock=time.monotonic):
        self.budget, self.grant, self.clock = float(budget_mb), grant, clock
        self.held = {}                        # holder -> MiB
        self.queue = collections.deque()      # (holder, MiB, asked at)
        self.learned = {}                     # task key -> MiB measured

    def need(self, key, estimate_mb):
        known = self.learned.get(key, 0.0) * MARGIN
        return max(float(estimate_mb or 0.0), known)

    def request(self, who, mb):
        if who in self.held or any(w is who for w, _, _ in self.queue):
            return
        self.queue.append((who, mb, self.clock()))
        self._grant_next()

    def release(self, who):
        self.queue = collections.deque(q for q in self.queue if q[0] is not who)
        if self.held.pop(who, None) is not None:
            self._grant_next()

    def learn(self, key, verdict, oom=False):
        mb = measured_mb(verdict)
        if mb:
            self.learned[key] = max(self.learned.get(key, 0.0), mb)
        if oom:   # it did not fit what it reserved: reserve more next time
            self.learned[key] = max(self.learned.get(key, 0.0), 1.5 * (mb or 0.0), self.budget / 2)

    def waiting_since(self, who):
        for w, _, asked in self.queue:
            if w is who:
                return asked
        return None

    def _grant_next(self):
        while self.queue:
            who, mb, asked = self.queue[0]
            used = sum(self.held.values())
            alone = not self.held
            if not alone and used + mb > self.budget:
                return
            self.queue.popleft()
            stats = getattr(who, "lock_stats", None)
            if stats is not None:
                stats["mem_wait"] = stats.get("mem_wait", 0.0) + self.clock() - asked
            if self.grant(who, alone and mb > self.budget):
                self.held[who] = mb
