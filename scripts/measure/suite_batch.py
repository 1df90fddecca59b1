"""Sends a whole suite to a running `kernelgate serve` as reward batches, all at once, and
reports throughput and where the time went (the scaling figure).

One `POST /v1/rewards` per task: its solution N times, each copy made distinct by a
trailing comment (nothing answered from another's result). Every request is in flight
at once, as trainers send groups. Standard library only: it runs on the GPU image as is.

usage: python3 scripts/measure/suite_batch.py --url URL --tasks datasets/level2
                                      --kernels datasets/solutions/level2 [--n 10] [--out R.json]
"""
import argparse
import concurrent.futures
import json
import os
import statistics
import time
import urllib.request

from gateway_batch import wait_ready

# Stages whose medians tell host-side work (process and CUDA context start) from GPU work.
STAGES = ("fork", "admission", "lock_mem_wait", "load", "reference", "reference_cuda", "candidate_cuda",
          "correctness", "first_call", "lock_wait", "timing", "total")


def post(url, task_src, code, n, tag):
    completions = [f"```python\n{code}\n# {tag} sample {i}\n```\n" for i in range(n)]
    body = json.dumps({"reference": task_src, "completions": completions, "wait_s": 3000}).encode()
    req = urllib.request.Request(url + "/v1/rewards", data=body, method="POST",
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=3600) as r:
        return json.load(r).get("results") or []


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", default="http://127.0.0.1:8080")
    ap.add_argument("--tasks", required=True)
    ap.add_argument("--kernels", required=True)
    ap.add_argument("--n", type=int, default=10, help="completions per task")
    ap.add_argument("--tag", default=str(time.time_ns()), help="makes this run's completions new to the cache")
    ap.add_argument("--out")
    a = ap.parse_args()
    pairs = [(os.path.join(a.tasks, f), os.path.join(a.kernels, f)) for f in sorted(os.listdir(a.kernels))
             if f.endswith(".py") and os.path.exists(os.path.join(a.tasks, f))]
    wait_ready(a.url)
    t0 = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(len(pairs)) as ex:
        futs = [ex.submit(post, a.url, open(t).read(), open(k).read(), a.n, a.tag) for t, k in pairs]
        results = [v for f in futs for v in f.result()]
    wall = time.monotonic() - t0
    statuses, gpus = {}, {}
    for v in results:
        s = (v or {}).get("status", "missing")
        statuses[s] = statuses.get(s, 0) + 1
        u = ((v or {}).get("env") or {}).get("gpu_uuid", "")
        gpus[u[-8:]] = gpus.get(u[-8:], 0) + 1
    medians = {}
    for st in STAGES:
        xs = [v["stage_ms"][st] for v in results if v and isinstance((v.get("stage_ms") or {}).get(st), (int, float))]
        if xs:
            medians[st] = round(statistics.median(xs), 1)
    rep = {"tasks": len(pairs), "n": len(results), "wall_s": round(wall, 2),
           "evals_per_s": round(len(results) / wall, 3), "statuses": statuses, "per_gpu": gpus,
           "stage_median_ms": medians}
    print(json.dumps(rep))
    if a.out:
        with open(a.out, "w") as f:
            json.dump(rep, f)


if __name__ == "__main__":
    main()
