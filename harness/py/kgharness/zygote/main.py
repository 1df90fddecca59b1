"""The zygote's command line: warm torch and triton once, probe the sandbox, fork the judge
service, say hello to Go, serve.

    python -m kgharness.zygote --mode gpu|cpu_interpreter --device-index N
        [--evaluator MODULE:FUNC] [--tmp-base DIR] [--memory-budget-mb MB]
"""

import argparse
import os

from .. import protocol
from ..runner import launchers, precompile
from ..sandbox import walls
from . import gpupeers, startup
from .loop import Zygote
from .startup import log

EVALUATOR = "kgharness.judge.flow:evaluate"
SHARE_ENV = "KERNELGATE_SHARE_REFERENCE"
# The store's cap, of a GPU's memory budget. Admission counts only what the store holds
# (kgharness.zygote.admission.stored): a fixed fifth taken out of the budget cut a 2 x 16 heavy
# group's evaluations admitted at once from 8.1 to 6.4 (H200, 956cfdf), where its two
# tasks' entries held 10 of the 26 GiB.
SHARE_FRACTION = 0.2
SHARE_DEFAULT_MB = {"gpu": 8192.0, "cpu_interpreter": 1024.0}   # when the budget is unknown


def share_budget_mb(mode, memory_budget_mb=0.0, explicit=None):
    """MiB for the shared reference store (device memory on a GPU, host memory on a CPU):
    the flag, else off when $KERNELGATE_SHARE_REFERENCE says so, else the mode's default."""
    if explicit is not None:
        return max(0.0, float(explicit))
    if os.environ.get(SHARE_ENV, "on").strip().lower() in ("0", "off", "false", "no"):
        return 0.0
    if mode == "gpu" and memory_budget_mb > 0:
        return SHARE_FRACTION * memory_budget_mb
    return SHARE_DEFAULT_MB[mode]


def main(argv=None):
    ap = argparse.ArgumentParser(prog="kgharness.zygote")
    ap.add_argument("--mode", choices=("gpu", "cpu_interpreter"), default="cpu_interpreter")
    ap.add_argument("--device-index", type=int, default=0)
    ap.add_argument("--evaluator", default=EVALUATOR)
    ap.add_argument("--tmp-base", default=None)
    ap.add_argument("--memory-budget-mb", type=float, default=0.0,
                    help="GPU memory evaluations may reserve together (0: no admission)")
    ap.add_argument("--peers-key", default=None,
                    help="name of the GPU other zygotes share (default: its PCI bus id in GPU mode, "
                         "none in CPU mode); zygotes with one key take turns at timing")
    ap.add_argument("--peers-dir", default=None, help=f"where the peers' lock files live ({gpupeers.LOCK_DIR})")
    ap.add_argument("--share-reference-mb", type=float, default=None,
                    help="the judge service's store of shared reference work (kgharness.judge.refstore); 0: "
                         "off. Default: $KERNELGATE_SHARE_REFERENCE (off/on), on: a fifth of the memory "
                         "budget on a GPU at most (what it holds counts against what evaluations reserve), "
                         "1 GiB in CPU mode")
    args = ap.parse_args(argv)
    share_mb = share_budget_mb(args.mode, args.memory_budget_mb, args.share_reference_mb)
    if args.mode == "cpu_interpreter":
        os.environ["TRITON_INTERPRET"] = "1"     # must precede the first triton import
    else:
        os.environ.pop("TRITON_INTERPRET", None)
        # One hardware work queue per CUDA context (every process forked from here inherits
        # it): 16 contexts created at once took 1.2 s instead of 3.1 s on the H200, and
        # context creation serialises in the driver. The cost: work a process puts on
        # several streams shares one queue (docs/protocol.md). An operator's setting wins.
        os.environ.setdefault("CUDA_DEVICE_MAX_CONNECTIONS", "1")
    versions = startup.import_stack(args.mode)
    evaluator = startup.load_evaluator(args.evaluator)   # imported before fork: children need no file access for it
    from ..judge import process  # noqa: F401 - loaded once, after the env and triton are set up, not per fork
    # Runners drop to an unprivileged uid where that uid can read the interpreter and,
    # on a GPU, still initialise CUDA (the probe tries both in a forked child).
    sb = walls.probe(args.tmp_base, drop_uid=True, cuda=args.mode == "gpu")
    device = "cuda:0" if args.mode == "gpu" else "cpu"
    if args.peers_key:
        peers = gpupeers.Peers(args.peers_key, args.peers_dir)
    else:
        peers = gpupeers.for_device(device, lock_dir=args.peers_dir) if args.mode == "gpu" else None
    z = Zygote(args.mode, device, evaluator, args.tmp_base, sb, memory_budget_mb=args.memory_budget_mb,
               peers=peers, share_mb=share_mb)
    if args.mode == "gpu":
        from ..runner import warmup
        cache = os.path.join(z.base, "trusted-triton-cache")
        why = warmup.fill(cache)
        if why is None:
            os.environ[warmup.ENV] = cache    # children inherit it and copy from it
            if launchers.enabled():
                z.launchers = launchers.Builder(cache, os.path.join(z.base, "launcher-staging"), log)
        else:
            log(f"trusted Triton cache not filled ({why}); children compile from scratch")
    z.memory.start_service()
    z.send(protocol.hello(os.getpid(), versions["python"], versions["torch"], versions["triton"],
                          args.mode, device, {k: sb.get(k) for k in
                                              ("netns", "landlock", "rlimits", "mountns", "uid_drop", "level", "detail")}))
    bad = precompile.invalid()
    if bad:
        log(f"{precompile.ENV}={bad!r} is none of {', '.join(precompile.KINDS)}: taken as auto")
    log(f"ready: mode={args.mode} device-index={args.device_index} sandbox={sb.get('level')} "
        f"{sb.get('detail', '')}; shared reference store {share_mb:g} MiB; "
        f"precompile {'on' if precompile.wanted(args.mode == 'gpu') else 'off'}; "
        f"shared launchers {'on' if z.launchers is not None else 'off'}")
    z.serve()
    return 0
