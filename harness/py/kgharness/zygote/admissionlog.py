"""Every admission event as a JSON line in a file ($KERNELGATE_ADMISSION_LOG), for
diagnosis beside nvidia-smi (scripts/measure/admission_trace.py)."""

import json
import os
import time

from .admission import task_key

ENV = "KERNELGATE_ADMISSION_LOG"


class AdmissionLog:
    """Every admission event as a JSON line in a file ($KERNELGATE_ADMISSION_LOG), with the
    wall clock and the holder's runner pids, to set beside nvidia-smi's per-process
    memory (scripts/measure/admission_trace.py): what each evaluation reserved against what its
    processes held, and what the GPU held beyond every reservation."""

    def __init__(self, path, budget_mb):
        self.file = open(path, "a", buffering=1)
        self("start", None, {"budget": round(float(budget_mb), 1), "pid": os.getpid()})

    def __call__(self, event, who, fields):
        rec = {"t": round(time.time(), 3), "ev": event, **fields}
        if who is not None:
            rec.update(id=getattr(who, "id", None), pids=dict(getattr(who, "runners", {}) or {}),
                       key=task_key(getattr(who, "job", None))[:8])
        try:
            self.file.write(json.dumps(rec) + "\n")
        except (OSError, ValueError):
            pass             # a diagnostic log must never stop admission
