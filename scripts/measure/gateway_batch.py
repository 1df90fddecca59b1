"""Sends one reward batch to a running `kernelgate serve` and reports its throughput.

The completions are N copies of one kernel file, each made distinct by a trailing
comment (so no cache or deduplication can answer one from another), wrapped as an
LLM would write them. Standard library only: it runs on the GPU image as is.

usage: python3 scripts/measure/gateway_batch.py --url URL --task TASK.py --kernel KERNEL.py
                                        [--n 512] [--out RESULT.json]
"""
import argparse
import json
import statistics
import time
import urllib.request


def wait_ready(url, timeout_s=180):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url + "/readyz", timeout=5) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.5)
    raise SystemExit(f"{url} not ready after {timeout_s} s")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", default="http://127.0.0.1:8080")
    ap.add_argument("--task", required=True)
    ap.add_argument("--kernel", required=True)
    ap.add_argument("--n", type=int, default=512)
    ap.add_argument("--out")
    a = ap.parse_args()
    code = open(a.kernel).read()
    completions = [f"Here is a faster kernel.\n\n```python\n{code}\n# sample {i}\n```\n" for i in range(a.n)]
    body = json.dumps({"reference": open(a.task).read(), "completions": completions,
                       "reward_fn": "log_speedup", "wait_s": 3000}).encode()
    wait_ready(a.url)
    req = urllib.request.Request(a.url + "/v1/rewards", data=body, method="POST",
                                 headers={"Content-Type": "application/json"})
    t0 = time.monotonic()
    with urllib.request.urlopen(req, timeout=3600) as r:
        resp = json.load(r)
        status = r.status
    wall = time.monotonic() - t0
    results = resp.get("results") or []
    statuses = {}
    for v in results:
        s = (v or {}).get("status", "missing")
        statuses[s] = statuses.get(s, 0) + 1
    gpus = {}
    for v in results:
        u = ((v or {}).get("env") or {}).get("gpu_uuid", "")
        gpus[u] = gpus.get(u, 0) + 1
    sp = [v["speedup"] for v in results if v and v.get("speedup")]
    rep = {"http_status": status, "n": a.n, "wall_s": wall, "evals_per_s": a.n / wall,
           "statuses": statuses, "per_gpu": gpus,
           "speedup_median": statistics.median(sp) if sp else None,
           "speedup_p10_p90": statistics.quantiles(sp, n=10)[0::8] if len(sp) > 10 else None,
           "stage_total_median_ms": statistics.median(v["stage_ms"]["total"] for v in results if v)}
    print(json.dumps(rep))
    if a.out:
        json.dump(rep, open(a.out, "w"))


if __name__ == "__main__":
    main()
