"""A GRPO-shaped load through a running gateway: for each task of a suite, a
group of --group completions in one POST /v1/rewards, as a trainer's step sends them,
every group of the run in flight at once.

A group holds the task's solution, variants with other launch parameters (num_warps and
BLOCK constants moved by powers of two), a broken variant (a syntax error), a wrong one
(its output scaled by 1.5) and a slow one (0.2 s of sleep per call), then the solution
again to fill the group; each completion carries a distinct comment (and a run stamp), so
none is answered from another's evaluation or from the result cache.

Reports per group its makespan (request to answer, the client's clock), its slowest
member's exec_ms and their ratio, and the same ratio less the group's wait in the job
queue for its first start (queue_wait_ms; with more groups than slots, the groups ahead of
it); over the run evals/s, slot utilisation (the sum of
exec_ms over slots x wall; slots from GET /v1/gpus) and the busy share of it (less the
waits for device memory and the timing lock), statuses, and the reference work
done (the sum of the reference runners' load time and CPU time, stage_ms "reference" and
"cpu_reference") and how many verdicts used shared reference work.

--stagger S sends the groups in the suite's order, S seconds apart, instead of all at once
from a thread each: the order in which seven groups sent at once reached the gateway
changed from run to run, and with it which tasks shared the GPU (row_l3_norm's 50 GiB
evaluations beside small ones, or alone at the end). On an H200 one binary's 7 x 16 ran
1.204, 1.497 and 1.454 evals/s in three calls (2026-12-03): too wide to compare two
builds in one run each.

usage: python3 scripts/measure/grpo_bench.py --url http://127.0.0.1:8080 --suite heavy --group 16
           [--tasks N] [--stagger S] [--json out.json]   ($KERNELGATE_API_KEY: a key with reward and admin)
"""
import argparse
import json
import os
import re
import statistics
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

WRONG = """

_kg_forward = ModelNew.forward
ModelNew.forward = lambda self, *a, **k: _kg_forward(self, *a, **k) * 1.5
"""
SLOW = """

import time as _kg_time
_kg_forward = ModelNew.forward
def _kg_slow(self, *a, **k):
    _kg_time.sleep(0.2)
    return _kg_forward(self, *a, **k)
ModelNew.forward = _kg_slow
"""


def variants(src):
    """The group's distinct kernels, by kind: [(kind, code)]."""
    out = [("solution", src)]
    for w in (1, 2, 4, 16):
        if "num_warps=" in src:
            code = re.sub(r"num_warps=\d+", f"num_warps={w}", src)
        else:  # launches on one line, kernel[grid](...), get one
            code = re.sub(r"^(\s*\w+\[[^\]\n]*\]\([^\n]*)\)\s*$", rf"\1, num_warps={w})", src, flags=re.M)
        out.append((f"num_warps={w}", code))
    for f in (0.5, 2.0):
        out.append((f"BLOCK x{f:g}", re.sub(r"(BLOCK\w*\s*=\s*)(\d+)\b",
                                             lambda m: m.group(1) + str(max(16, int(int(m.group(2)) * f))), src)))
    out += [("broken", "this line is not Python\n" + src), ("wrong", src + WRONG), ("slow", src + SLOW)]
    seen, unique = set(), []
    for kind, code in out:
        if code not in seen:
            seen.add(code)
            unique.append((kind, code))
    return unique


def group(src, n, stamp):
    kinds = variants(src)
    members = [kinds[i] if i < len(kinds) else ("solution", src) for i in range(n)]
    return [(kind, f"Here is the kernel.\n```python\n# run {stamp} member {i}\n{code}\n```")
            for i, (kind, code) in enumerate(members)]


def call(url, method, path, body=None, timeout=3600):
    headers = {"Content-Type": "application/json"}
    if os.environ.get("KERNELGATE_API_KEY"):  # scopes reward and admin (GET /v1/gpus)
        headers["Authorization"] = "Bearer " + os.environ["KERNELGATE_API_KEY"]
    req = urllib.request.Request(url + path, data=json.dumps(body).encode() if body is not None else None,
                                 method=method, headers=headers)
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.loads(r.read())


def run_group(url, task_id, members):
    t0 = time.monotonic()
    resp = call(url, "POST", "/v1/rewards", {"task_id": task_id, "completions": [c for _, c in members],
                                               "reward_fn": "binary", "wait_s": 3600})
    makespan = time.monotonic() - t0
    results = resp["results"]
    exec_s = [(r.get("exec_ms") or 0) / 1e3 for r in results]
    # How long the group waited in the job queue before its first member started: with
    # more groups in flight than slots, that is the groups ahead of it, which no order of
    # the queue removes. The makespan after it is what the scheduling keeps together.
    waits = [r["queue_wait_ms"] / 1e3 for r in results if r.get("queue_wait_ms") is not None]
    first_start = min(waits) if waits else 0.0
    slowest = max(exec_s)
    return {"task_id": task_id, "n": len(members), "makespan_s": makespan, "slowest_exec_s": slowest,
            "gateway_makespan_s": (resp.get("makespan_ms") or 0) / 1e3,
            "makespan_over_slowest": makespan / slowest if slowest > 0 else None,
            "first_start_s": first_start,
            "after_start_over_slowest": (makespan - first_start) / slowest if slowest > 0 else None,
            "exec_s_total": sum(exec_s),
            # The part of exec spent waiting for device memory or the GPU's timing lock: a
            # slot that waits counts as used in the utilisation, not in the busy share.
            "wait_s_total": sum(((r.get("stage_ms") or {}).get("lock_mem_wait", 0) +
                                 (r.get("stage_ms") or {}).get("lock_wait", 0)) / 1e3 for r in results),
            "reference_ms_total": sum((r.get("stage_ms") or {}).get("reference", 0) for r in results),
            # The reference runners' CPU time: what sharing the reference work saves.
            "reference_cpu_ms_total": sum((r.get("stage_ms") or {}).get("cpu_reference", 0) for r in results),
            "members": [{"kind": k, "status": r["status"], "exec_s": e, "speedup": r.get("speedup"),
                         # When it started, after the request (a group's members may start in
                         # waves: the makespan's first start is its earliest).
                         "queue_wait_s": (r["queue_wait_ms"] / 1e3 if r.get("queue_wait_ms") is not None
                                          else None),
                         "correct": r.get("correct"), "hack_flags": r.get("hack_flags"),
                         "reference_shared": r.get("reference_shared"), "device_memory": r.get("device_memory"),
                         "stage_ms": r.get("stage_ms") or {},
                         # Where a window's calls go: each side's time on its own clock and
                         # the judge's overhead beyond it.
                         "runtime_ms": (r.get("runtime") or {}).get("median_ms"),
                         "ref_runtime_ms": (r.get("ref_runtime") or {}).get("median_ms"),
                         "wall_check": r.get("wall_check"),
                         # Why a member did not come back correct (a harness_error is ours).
                         "feedback": None if r.get("correct") else (r.get("feedback") or "")[:600],
                         "warnings": (r.get("warnings") or [])[:8], "retry": r.get("retry")}
                        for (k, _), r, e in zip(members, results, exec_s)]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--url", default="http://127.0.0.1:8080")
    ap.add_argument("--suite", default="heavy", help="a suite under datasets/ with solutions")
    ap.add_argument("--group", type=int, default=16)
    ap.add_argument("--tasks", type=int, default=0, help="the first N tasks (0: all)")
    ap.add_argument("--stagger", type=float, default=0.0,
                    help="seconds between the groups' requests, in the suite's order (0: all at once)")
    ap.add_argument("--json", help="write the report here too")
    a = ap.parse_args()
    if a.group < 1:
        sys.exit("--group must be at least 1")
    if not 0 <= a.stagger <= 60:
        sys.exit("--stagger must be between 0 and 60 seconds")
    sols = sorted((REPO / "datasets" / "solutions" / a.suite).glob("*.py"), key=lambda p: int(p.stem.split("_")[0]))
    if a.tasks:
        sols = sols[:a.tasks]
    if not sols:
        sys.exit(f"no solutions under datasets/solutions/{a.suite}")
    slots = call(a.url, "GET", "/v1/gpus").get("concurrency") or 0
    stamp = time.time_ns()
    groups = [(f"{a.suite}/{p.stem}", group(p.read_text(), a.group, stamp)) for p in sols]
    t0 = time.monotonic()
    def one(ig):
        i, g = ig
        time.sleep(max(0.0, t0 + i * a.stagger - time.monotonic()))
        res = run_group(a.url, *g)
        # As each group lands: a run cut short still says how far it got.
        print(f"  {time.monotonic() - t0:7.1f} s  {res['task_id']} done, makespan {res['makespan_s']:.1f} s",
              flush=True)
        if a.json:
            with open(a.json + ".partial", "a") as f:
                f.write(json.dumps(res) + "\n")
        return res

    with ThreadPoolExecutor(len(groups)) as pool:
        done = list(pool.map(one, enumerate(groups)))
    wall = time.monotonic() - t0
    evals = sum(g["n"] for g in done)
    statuses = {}
    for g in done:
        for m in g["members"]:
            statuses[m["status"]] = statuses.get(m["status"], 0) + 1
    ratios = [g["makespan_over_slowest"] for g in done if g["makespan_over_slowest"]]
    after = [g["after_start_over_slowest"] for g in done if g["after_start_over_slowest"]]
    report = {"suite": a.suite, "group": a.group, "groups": len(done), "stagger_s": a.stagger,
              "evals": evals, "wall_s": wall,
              "evals_per_s": evals / wall, "slots": slots,
              "slot_utilisation": sum(g["exec_s_total"] for g in done) / (slots * wall) if slots else None,
              "slot_busy": sum(g["exec_s_total"] - g["wait_s_total"] for g in done) / (slots * wall) if slots else None,
              "makespan_over_slowest_median": statistics.median(ratios) if ratios else None,
              "makespan_over_slowest_max": max(ratios) if ratios else None,
              "after_start_over_slowest_median": statistics.median(after) if after else None,
              "after_start_over_slowest_max": max(after) if after else None,
              "reference_ms_total": sum(g["reference_ms_total"] for g in done),
              "reference_cpu_ms_total": sum(g["reference_cpu_ms_total"] for g in done),
              "reference_shared": sum(bool(m.get("reference_shared")) for g in done for m in g["members"]),
              "statuses": statuses, "per_group": done}
    for g in done:
        for m in g["members"]:
            if m["status"] == "harness_error":
                print(f"harness_error in {g['task_id']} ({m['kind']}): {m['feedback']!r} warnings {m['warnings']}")
    for g in done:
        print(f"{g['task_id']:40s} n={g['n']:3d} makespan {g['makespan_s']:7.1f} s  slowest {g['slowest_exec_s']:7.1f} s"
              f"  ratio {g['makespan_over_slowest'] or 0:5.2f}  queued {g['first_start_s']:6.1f} s"
              f"  after ÷ slowest {g['after_start_over_slowest'] or 0:5.2f}")
    util, busy = report["slot_utilisation"], report["slot_busy"]
    print(f"{evals} evaluations in {wall:.1f} s: {report['evals_per_s']:.3f} evals/s; slots {slots}, utilisation "
          f"{'-' if util is None else f'{100 * util:.0f}%'} (busy {'-' if busy is None else f'{100 * busy:.0f}%'} "
          f"without waits for memory and the timing lock); makespan/slowest median "
          f"{report['makespan_over_slowest_median'] or 0:.2f}, max {report['makespan_over_slowest_max'] or 0:.2f} "
          f"(after the first start: {report['after_start_over_slowest_median'] or 0:.2f}, "
          f"max {report['after_start_over_slowest_max'] or 0:.2f}); "
          f"reference loads {report['reference_ms_total'] / 1e3:.1f} s, reference CPU "
          f"{report['reference_cpu_ms_total'] / 1e3:.1f} s, {report['reference_shared']} shared; {statuses}")
    if a.json:
        Path(a.json).write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
