"""Where a timed call's time goes on a runner's side, outside the harness: for each task
with a solution, one forked process (CUDA uninitialised, as a runner starts) builds the
reference and the solution, warms both, then times CALLS calls of each the way a window's
`go` request does (kgharness.inputs.make_inputs, kgharness.timing.timed_call with the
spin head start sized as the judge sizes it, the copy into a buffer) and reports, per
side, the medians of: making the inputs (with a sync), the spin head, the call's events,
its host enqueue, the copy and the whole request. No guards, no judge, no messages.

With --gate it also times each call behind a gate instead of a spin: a kernel that waits
on a flag in pinned host memory, which the host sets once it has queued the call, so the
GPU starts as soon as the launches are in and no margin is spent.

usage: python3 scripts/measure/go_parts.py TASKS_DIR SOLUTIONS_DIR [--calls N] [--only a,b] [--gate]
"""
import argparse
import importlib.util
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "harness", "py"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402  imported before the fork, as the zygote does
import triton  # noqa: E402,F401

from forked import in_child  # noqa: E402
from kgharness.judge.timedcalls import HEAD_MARGIN, HEAD_MS  # noqa: E402  the judge's sizing of the spin

HEAD_MIN = HEAD_MS[0]


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def med(xs):
    return round(statistics.median(xs), 4) if xs else None


def gate_kernel():
    import triton.language as tl

    @triton.jit
    def _gate(flag_ptr, max_polls):
        # Spins until the host writes 1 into the pinned flag (or max_polls reads passed).
        n = 0
        while (tl.load(flag_ptr, volatile=True) == 0) & (n < max_polls):
            n += 1
    return _gate


def gated(g, flag, host_flag, flusher, model, x):
    """One call behind the gate: its events and the host's wall time from the gate's launch."""
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    host_flag[0] = 0
    t0 = time.perf_counter()
    g[(1,)](flag, 1 << 22)
    flusher()
    s.record()
    with torch.no_grad():
        model(*x)
    e.record()
    host_flag[0] = 1
    torch.cuda.synchronize()
    return {"gate_events": s.elapsed_time(e), "gate_wall": (time.perf_counter() - t0) * 1e3}


def child(task_path, sol_path, calls, gate):
    from kgharness import inputs as I
    from kgharness import timing
    dev = "cuda"
    task, sol = load(task_path, "task"), load(sol_path, "sol")
    init = task.get_init_inputs()
    torch.manual_seed(0)
    with torch.device(dev):
        ref = task.Model(*init).to(dev).eval()
        cand = sol.ModelNew(*init).to(dev).eval()
    flusher = timing.Flusher(dev)
    null = timing._null_window
    g = None
    if gate:
        g = gate_kernel()
        flag = torch.zeros(1, dtype=torch.int32).pin_memory()
        host_flag = flag.numpy()
    out = {}
    for name, model in (("reference", ref), ("candidate", cand)):
        for _ in range(3):   # compile, autotune, allocator
            with torch.no_grad():
                model(*I.make_inputs(task.get_inputs, 1, dev))
        torch.cuda.synchronize()
        enq, rows = [], []
        for k in range(calls):
            head = max(HEAD_MIN, HEAD_MARGIN * statistics.median(enq)) if enq else HEAD_MIN
            t0 = time.perf_counter()
            x = I.make_inputs(task.get_inputs, 1000 + k, dev)
            torch.cuda.synchronize()
            t1 = time.perf_counter()
            ms, o, e = timing.timed_call(model, x, null, flusher, True, head)
            t2 = time.perf_counter()
            leaves = I.flatten(o)
            buf = [torch.empty_like(t) for t in leaves if isinstance(t, torch.Tensor)]
            torch.cuda.synchronize()
            t3 = time.perf_counter()
            for b, t in zip(buf, [t for t in leaves if isinstance(t, torch.Tensor)]):
                b.copy_(t)
            torch.cuda.synchronize()
            t4 = time.perf_counter()
            enq.append(e)
            row = {"inputs": (t1 - t0) * 1e3, "head": head, "events": ms, "enqueue": e,
                   "call_wall": (t2 - t1) * 1e3, "copy": (t4 - t3) * 1e3, "total": (t2 - t0 + t4 - t3) * 1e3}
            del o, leaves
            if gate and "gate_error" not in out:
                try:
                    row.update(gated(g, flag, host_flag, flusher, model, x))
                except Exception as exc:  # the gate is an experiment: the spin figures stand
                    out["gate_error"] = repr(exc)[:200]
            rows.append(row)
            del x
        keys = {k for r in rows for k in r}
        out[name] = {k: med([r[k] for r in rows[1:] if k in r]) for k in keys}
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tasks")
    ap.add_argument("solutions")
    ap.add_argument("--calls", type=int, default=12)
    ap.add_argument("--only", default="")
    ap.add_argument("--gate", action="store_true")
    a = ap.parse_args()
    only = [s for s in a.only.split(",") if s]
    results = {}
    for f in sorted(os.listdir(a.solutions)):
        if not f.endswith(".py") or (only and not any(f.startswith(o) for o in only)):
            continue
        tp = os.path.join(a.tasks, f)
        if not os.path.exists(tp):
            continue
        r = in_child(child, tp, os.path.join(a.solutions, f), a.calls, a.gate)
        results[f] = r
        if "error" in r:
            print(f"{f}: {r['error']}", flush=True)
            continue
        for side in ("reference", "candidate"):
            s = r[side]
            extra = f" gate: events {s['gate_events']:.3f} wall {s['gate_wall']:.3f}" if "gate_wall" in s else r.get("gate_error", "")
            print(f"{f[:34]:34s} {side[:4]} inputs {s['inputs']:.3f} head {s['head']:.3f} events {s['events']:.3f} "
                  f"enqueue {s['enqueue']:.3f} call {s['call_wall']:.3f} copy {s['copy']:.3f} "
                  f"total {s['total']:.3f} ms{extra}", flush=True)
    print(json.dumps(results))


if __name__ == "__main__":
    main()
