"""One evaluation in flight, as the zygote sees it: its judge's pid and pipes, its limits
from the job's options, what the watchdog last saw of its processes, and the verdict its
judge sent (kgharness.zygote.records)."""

import os

from .. import options, protocol
from ..runner import precompile
from . import watch

CHILD_LINE_LIMIT = 4 << 20    # a judge's record line (its verdict) larger than this is refused


class Child:
    """One evaluation in flight, as the zygote sees it."""

    def __init__(self, rid, job, t_recv, tmpdir, mode="cpu_interpreter"):
        opts = job.get("options") or {}
        self.id, self.job, self.t_recv, self.tmpdir = rid, job, t_recv, tmpdir
        self.timeout_s = options.timeout_s(opts)
        # The compile budget: active time until the candidate's first call returns (its
        # import, JIT compile and autotune, and the reference's load alongside); an
        # absent or 0 option is the mode's default. None: no budget (a task check has
        # no candidate).
        self.compile_budget_s = None if job.get("task_check") else \
            precompile.budget_s(opts, mode)
        self.compiled = False
        self.memory_limit = options.memory_limit_bytes(opts)
        self.output_limit = options.output_limit_bytes(opts)
        self.pid = None
        self.rec_r = self.grant_w = None
        self.reader = protocol.LineReader(CHILD_LINE_LIMIT)
        self.t_fork = None
        self.started_t = None          # the child's own monotonic timestamp at its first instruction
        self.stage = "startup"
        self.stage_t = None            # when it entered its stage (the zygote's clock)
        self.slow_logged = False
        self.share_key = None          # its task's key in the shared store (kgharness.judge.refstore), once told
        self.unstuck_logged = False    # the zygote continued processes of it left stopped (Watchdog.unstick)
        # In its precompile stage (Zygote.ahead on): only the candidate's compile-only child
        # works, with no GPU device file and at idle CPU priority, so it is not stopped
        # for other evaluations' windows (kgharness.runner.precompile).
        self.ahead = False
        self.verdict = None
        self.kill_reason = None        # (status, feedback) once the zygote decided to kill it
        self.lock_stats = {}           # seconds: wait, shared_held, exclusive_held (gpulock)
        self.pids = set()              # the evaluation's processes at the last scan
        self.by_role = {}              # role -> (pids, rss) at the last scan
        # A verdict counts only with this nonce: candidate code shares the child's process
        # and could write a record of its own on the pipe.
        self.nonce = os.urandom(16).hex()
        self.forged = None             # why a record on the pipe was not the judge's
        self.runners = {}              # role -> pid, as the judge reported them
        self.frozen_since = None       # stopped while another evaluation is timed
        self.frozen_s = 0.0
        self.host = None               # the reference host its judge inherited (kgharness.zygote.refhosts)

    def active_s(self, now, waiting_since=None):
        """Seconds the evaluation has run, not counting waits for the GPU lock or time
        spent stopped while another evaluation held it."""
        waiting = now - waiting_since if waiting_since is not None else 0.0
        frozen = watch.frozen_s(self, now, waiting_since)
        waits = self.lock_stats.get("wait", 0.0) + self.lock_stats.get("mem_wait", 0.0)
        return now - self.t_fork - waits - waiting - frozen

    def leaders(self):
        return {self.pid} | set(self.runners.values())

    def loading_host(self):
        """The host this evaluation loads and uses as its reference: stopped and continued
        with it, never killed with it."""
        h = self.host
        return h.pid if h is not None and h.creator is self and h.state == "loading" else None

    def tell(self, data):
        """Write a grant on the judge's grant pipe (short: atomic). False when it died (or
        stopped reading): next in line."""
        try:
            os.write(self.grant_w, data)
            return True
        except OSError:
            return False
