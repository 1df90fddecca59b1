"""Where one evaluation's host CPU goes: runs evaluate() for TASK/KERNEL in a fresh forked
process (CUDA uninitialised, empty private Triton cache) under cProfile, then prints the
stage breakdown, CPU seconds (self and waited children, e.g. ptxas) and the top functions.

usage: python3 scripts/measure/profile_eval.py TASK.py KERNEL.py [gpu|cpu_interpreter]
"""
import cProfile
import os
import pstats
import resource
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "harness", "py"))


def main(task_path, kernel_path, mode="gpu"):
    tmp = tempfile.mkdtemp(prefix="kgprof-")
    os.environ["TRITON_CACHE_DIR"] = os.path.join(tmp, "triton")
    import torch  # noqa: F401 - the zygote has these imported before it forks
    import triton  # noqa: F401
    from kgharness.judge.context import LocalContext
    from kgharness.judge.flow import evaluate
    pid = os.fork()
    if pid:
        os.waitpid(pid, 0)
        return
    job = {"task": {"name": os.path.basename(task_path), "path": task_path,
                    "source": open(task_path).read()},
           "code": open(kernel_path).read(), "options": {}}
    ctx = LocalContext(mode=mode, device="cuda:0" if mode == "gpu" else "cpu", tmpdir=tmp)
    prof = cProfile.Profile()
    r0, w0 = resource.getrusage(resource.RUSAGE_SELF), time.monotonic()
    prof.enable()
    v = evaluate(job, ctx)
    prof.disable()
    r1, c1 = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.monotonic() - w0
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    print(f"{os.path.basename(task_path)}: {v['status']} speedup {v['speedup']} wall {wall:.2f} s, "
          f"cpu self {cpu:.2f} s, cpu waited children {c1.ru_utime + c1.ru_stime:.2f} s")
    print("stage_ms:", {k: round(x) for k, x in v["stage_ms"].items()})
    st = pstats.Stats(prof)
    st.sort_stats("cumulative").print_stats(28)
    st.sort_stats("tottime").print_stats(15)
    os._exit(0)


if __name__ == "__main__":
    main(*sys.argv[1:4])
