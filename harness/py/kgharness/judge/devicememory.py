"""The judge's device memory: its admission (the zygote grants it: kgharness.zygote.admission),
the reference's share when it comes later, and what its processes used."""

import contextlib
import os
import time

from . import reservation

# "on": an evaluation reserves its runners' CUDA contexts ahead of the rest of its device
# memory and makes them while it waits (kgharness.zygote.admission). Off by default: +5% on heavy
# GRPO groups on an H200, and its waiting contexts take headroom (docs/measurements).
EARLY_CONTEXTS_ENV = "KERNELGATE_EARLY_CONTEXTS"


class DeviceMemory:
    """`judge` is the kgharness.judge.flow.Judge."""

    def __init__(self, judge):
        self.judge = judge
        self.peaks = {}                     # role -> peak MiB reserved on the device
        self.alone = False                  # admitted with the GPU to itself
        # Admitted without its reference's memory (kgharness.zygote.admission, "the reference
        # later"): the reference runner is loaded but makes its first call only once the
        # candidate has passed, after reserve_more. In CPU mode every shared evaluation
        # works this way (there is no memory to wait for; a failing candidate then costs
        # no reference call at all).
        self.owed = False
        self.ref_mb = 0.0            # the reference's share of the reservation (MiB, no context)

    def admit(self, check, info=None, share=False):
        """Wait for the GPU's memory (the zygote's admission) before the runners' CUDA work."""
        j = self.judge
        if not j.gpu:
            return
        j.stage("admission")
        if info is None:
            rep = j.talk.ask(j.reference, "load", describe=True, describe_only=True)
            info = rep.get("task_info") if isinstance(rep.get("task_info"), dict) else {}
        quotas = reservation.quotas_mb(info, check=check) or reservation.default_quotas(check)
        want = reservation.total_mb(quotas)
        self.ref_mb = quotas["reference"]
        # A shared evaluation's reference only runs in the timing window: its share may
        # come later (kgharness.zygote.admission), if the candidate passes.
        later = quotas["reference"] if share and not check else 0.0
        # A host it inherited may be ready by the time it is admitted: then its reference's
        # share is owed, and cancelled when it borrows the host (take_host).
        host_mb = quotas["reference"] if not check and not j.sharing.host_role and j.ctx.inherits_host() else 0.0
        asked = []
        if not check and os.environ.get(EARLY_CONTEXTS_ENV, "off") == "on":
            # Contexts first (kgharness.zygote.admission): the runners make theirs while the judge
            # waits for the rest of the reservation.
            runners = (j.reference, j.candidate)
            j.ctx.reserve(len(runners) * reservation.CONTEXT_MB, contexts=True)
            asked = [(r, j.talk.settle(r, lambda r=r: r.request("cuda"))) for r in runners]
        if j.sharing.hosted:
            _, self.alone = j.ctx.reserve_hosted(want, self.ref_mb)
        elif later or host_mb:
            _, self.alone, self.owed = j.ctx.reserve_first(want, later, host_mb)
            if self.owed:
                j.verdict["stage_ms"]["reference_owed"] = 1
        else:
            _, self.alone = j.ctx.reserve(want)
        for r, seq in asked:
            j.talk.settle(r, lambda r=r, seq=seq: r.reply("cuda", seq))

    def bring_reference_memory(self):
        """Wait for the reference's share that admission left owed."""
        if self.owed:
            t0 = time.monotonic()
            self.judge.ctx.reserve_more()
            self.judge.verdict["stage_ms"]["reference_later_wait"] = round((time.monotonic() - t0) * 1e3, 3)
            self.owed = False

    def footprint(self):
        """Device memory used so far (docs/protocol.md, device_memory), or None off a GPU."""
        j = self.judge
        own = None
        if j.gpu and j.ops is not None:
            with contextlib.suppress(Exception):
                own = j.ops.held_bytes()
        if own is None:
            return None
        return {"reference_mb": round(self.peaks.get("reference", 0.0), 1),
                "candidate_mb": round(self.peaks.get("candidate", 0.0), 1),
                "judge_mb": round(own / (1 << 20), 1)}
