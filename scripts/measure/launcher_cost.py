"""How much of a candidate's first call is Triton building its C launchers with the host's
C compiler: for each solution in a folder, a fresh forked process (CUDA uninitialised, a
private Triton cache that already holds the driver stubs, as in the harness) builds the
task's inputs, runs the solution once and reports its wall time, its CPU seconds (its own
and its children's: gcc, ptxas), and the wall seconds spent in launcher builds.

usage: python3 scripts/measure/launcher_cost.py TASKS_DIR SOLUTIONS_DIR
"""
import importlib.util
import json
import os
import resource
import shutil
import sys
import tempfile
import time

from forked import in_child


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def child(task_path, sol_path, cache):
    import torch
    import triton.runtime.build as build
    os.environ["TRITON_CACHE_DIR"] = cache
    spent = {"launcher_s": 0.0, "launchers": 0}
    real = build._build

    def timed(name, *a, **k):
        t = time.perf_counter()
        try:
            return real(name, *a, **k)
        finally:
            if name == "__triton_launcher":
                spent["launcher_s"] += time.perf_counter() - t
                spent["launchers"] += 1
    build._build = timed
    task, sol = load(task_path, "task"), load(sol_path, "sol")
    torch.manual_seed(0)
    with torch.device("cuda"):
        model = sol.ModelNew(*task.get_init_inputs())
        inputs = task.get_inputs()
    torch.cuda.synchronize()
    r0, c0, t0 = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    with torch.no_grad():
        model(*inputs)
    torch.cuda.synchronize()
    r1, c1 = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = lambda a, b: (b.ru_utime + b.ru_stime) - (a.ru_utime + a.ru_stime)  # noqa: E731
    return {"first_call_s": time.perf_counter() - t0, "cpu_self_s": cpu(r0, r1), "cpu_children_s": cpu(c0, c1), **spent}


def main(tasks, sols):
    import torch  # noqa: F401 - imported before the fork, as in the zygote
    import triton  # noqa: F401
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "harness", "py"))
    from kgharness.runner import warmup
    trusted = tempfile.mkdtemp(prefix="kg-trusted-")
    err = warmup.fill(trusted)
    if err:
        sys.exit(f"warm-up: {err}")
    rows = []
    for name in sorted(os.listdir(sols)):
        if not name.endswith(".py"):
            continue
        cache = tempfile.mkdtemp(prefix="kg-cache-")
        shutil.copytree(trusted, cache, dirs_exist_ok=True)
        row = {"solution": name, **in_child(child, os.path.join(tasks, name), os.path.join(sols, name), cache)}
        rows.append(row)
        print(json.dumps(row), flush=True)
        shutil.rmtree(cache, ignore_errors=True)
    ok = [r for r in rows if "error" not in r]
    if ok:
        tot = lambda k: sum(r[k] for r in ok)  # noqa: E731
        print(f"{len(ok)} solutions: first call {tot('first_call_s'):.1f} s wall, CPU {tot('cpu_self_s'):.1f} s own "
              f"+ {tot('cpu_children_s'):.1f} s children; {tot('launchers')} launchers built in "
              f"{tot('launcher_s'):.1f} s ({100 * tot('launcher_s') / tot('first_call_s'):.0f}% of first-call wall)")


if __name__ == "__main__":
    main(*sys.argv[1:3])
