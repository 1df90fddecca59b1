"""Does a kernel's GPU time depend on the process it runs in? For each task/solution pair,
N fresh forked processes (CUDA uninitialised before the fork, as in the zygote) each time
the solution and the reference alternately, the harness's way (spin head start, L2 flush,
CUDA events, fresh inputs per call), and print their medians and where the inputs landed.
With PAD=1 each process first allocates a random-sized block, shifting what follows.

usage: python3 scripts/measure/process_variance.py N TASK.py SOLUTION.py [TASK.py SOLUTION.py ...]
"""
import importlib.util
import json
import os
import random
import statistics
import sys

from forked import in_child


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def one(task_path, sol_path, iters=30):
    import torch
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "harness", "py"))
    from kgharness import timing
    task, sol = load(task_path, "task"), load(sol_path, "sol")
    dev = torch.device("cuda")
    pad = None
    if os.environ.get("PAD") == "1":
        pad = torch.empty(random.randrange(1, 64 << 20), dtype=torch.uint8, device=dev)
    torch.manual_seed(0)
    with torch.device(dev):
        init = task.get_init_inputs()
        ref, cand = task.Model(*init), sol.ModelNew(*init)
    flusher = timing.Flusher(dev)
    nowin = lambda: __import__("contextlib").nullcontext()  # noqa: E731
    times = {"ref": [], "cand": []}
    ptrs = []
    for i in range(iters + 3):
        for name, m in (("ref", ref), ("cand", cand)):
            torch.manual_seed(i)
            with torch.device(dev):
                x = task.get_inputs()
            ptrs.append(x[0].data_ptr() % (2 << 20))
            ms, _, _ = timing.timed_call(m, x, nowin, flusher, True)
            if i >= 3:
                times[name].append(ms)
    del pad
    return {k: round(statistics.median(v), 4) for k, v in times.items()} | {
        "cand_spread": round((max(times["cand"]) - min(times["cand"])) / statistics.median(times["cand"]), 3),
        "x_mod_2MiB": sorted(set(ptrs))[:3]}


def main(n, pairs):
    import torch  # noqa: F401 - imported before the fork, as in the zygote
    import triton  # noqa: F401
    for task_path, sol_path in pairs:
        rows = [in_child(one, task_path, sol_path) for _ in range(n)]
        name = os.path.basename(sol_path)
        for r in rows:
            print(name, json.dumps(r), flush=True)
        ok = [r for r in rows if "error" not in r]
        if ok:
            c, r = [x["cand"] for x in ok], [x["ref"] for x in ok]
            print(f"{name}: candidate across {len(ok)} processes {min(c):.4f}..{max(c):.4f} ms "
                  f"({100 * (max(c) / min(c) - 1):.1f}%), reference {min(r):.4f}..{max(r):.4f} ms "
                  f"({100 * (max(r) / min(r) - 1):.1f}%)", flush=True)


if __name__ == "__main__":
    args = sys.argv[2:]
    main(int(sys.argv[1]), list(zip(args[0::2], args[1::2])))
