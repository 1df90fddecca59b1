"""The zygote's start: what it imports and warms once so that every fork shares it, and
the evaluator it serves. Nothing here initialises CUDA: a process that did could not
fork children that use the GPU."""

import importlib
import platform
import sys

from ..verdict import finalize, new_verdict


def log(msg):
    import os
    print(f"kgharness.zygote[{os.getpid()}]: {msg}", file=sys.stderr, flush=True)


def import_stack(mode):
    """Import torch and triton (the slow part every child inherits) without touching CUDA."""
    import torch
    import triton
    import triton.language  # noqa: F401
    if mode == "gpu":
        for name in ("triton.compiler", "triton.backends.nvidia.compiler",
                     "triton.backends.nvidia.driver", "torch.cuda", "torch.profiler"):
            try:
                importlib.import_module(name)
            except Exception as e:
                log(f"warm import of {name} failed: {e}")
        prewarm_host_state()
    prewarm_meta_pass()
    ieee_fp32()
    # One intra-op thread per child: children run side by side, and on a GPU host the
    # cores belong to their compiles and to the one child that is timing.
    torch.set_num_threads(1)
    if torch.cuda.is_initialized():
        log("warning: CUDA was initialised in the zygote; children may fail")
    return {"python": platform.python_version(), "torch": torch.__version__.split("+")[0],
            "triton": triton.__version__}


def ieee_fp32():
    """fp32 is IEEE fp32 on both sides: no TF32 in cuBLAS or cuDNN. fp32 outputs are
    compared at 1e-4, and cuDNN's default (TF32 on) put an fp32 convolution reference 7.5
    times its tolerance from its exact answer (H200), where an exact kernel was rejected.
    Set before any fork, so every runner starts with it and the guards' snapshot holds it
    (a candidate that turns TF32 on is flagged `precision`). cuBLAS already defaults to
    this."""
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")


def prewarm_host_state():
    """Once-per-process host work that every GPU child would otherwise repeat, done here
    where the fork shares it. Measured on an H200 child (profile_eval.py): Triton's cache
    key hashes its own installation (~0.5 s of CPU) and torch's first CUDA init registers
    Triton ops with torch.library (~0.45 s). Neither touches CUDA."""
    import torch
    steps = (("triton_key", lambda: importlib.import_module("triton.runtime.cache").triton_key()),
             # queued for torch's CUDA lazy init; idempotent, so the child's run is a lookup
             ("torch triton ops", getattr(torch.cuda, "_register_triton_kernels", lambda: None)))
    for name, step in steps:
        try:
            step()
        except Exception as e:   # an optimisation only: children redo it themselves
            log(f"prewarm {name} failed: {type(e).__name__}: {e}")


def prewarm_meta_pass():
    """Every GPU evaluation starts with a meta-device pass (kgharness.zygote.admission sizes it
    from the shapes). The first one in a process costs ~2.3 s of imports and lazy
    registrations (measured here); the second, ~10 ms. Done once here, forks share it."""
    import types

    import torch
    from ..runner import taskinfo
    mod = types.SimpleNamespace(Model=lambda: torch.nn.Linear(8, 8), get_init_inputs=lambda: [],
                                get_inputs=lambda: [torch.randn(4, 8)])
    info = taskinfo.describe(mod, "", 0)
    if info["meta_error"]:
        log(f"prewarm meta pass: {info['meta_error']}")


def load_evaluator(spec):
    """MODULE:FUNC -> callable; on failure a stand-in that reports harness_error."""
    mod, _, func = spec.partition(":")
    try:
        return getattr(importlib.import_module(mod), func or "evaluate")
    except Exception as e:
        msg = f"evaluator {spec} could not be loaded: {type(e).__name__}: {e}"
        log(msg)

        def broken(job, ctx):
            v = new_verdict(ctx.mode, ctx.device)
            v["feedback"] = msg
            return finalize(v)
        return broken


