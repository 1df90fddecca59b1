"""One reward at a time through a running gateway, as a trainer that waits for each answer:
for each task of a suite with a solution, --per-task uncached requests (the solution made
distinct by a trailing comment), a random 0..--pause s between them. Reports, p50 and p99 in
ms, the round trip, the verdict's queue_wait_ms and exec_ms, and round trip - exec (what the
gateway and its queue add to a reward). Standard library only.

usage: python3 scripts/measure/one_at_a_time.py --url http://127.0.0.1:8080 --suite level2 \
           [--per-task 2] [--pause 0.3] [--json OUT.json] [--tag NAME]
"""

import argparse
import json
import random
import sys
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def q(xs, p):
    s = sorted(xs)
    return s[min(int(p * (len(s) - 1) + 0.5), len(s) - 1)] if s else float("nan")


def post(url, body, timeout):
    req = urllib.request.Request(url + "/v1/rewards", data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.loads(r.read())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--suite", default="level2")
    ap.add_argument("--per-task", type=int, default=2)
    ap.add_argument("--pause", type=float, default=0.3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json")
    ap.add_argument("--tag", default="")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    sols = sorted((REPO / "datasets" / "solutions" / a.suite).glob("*.py"))
    rows = []
    for sol in sols:
        task = REPO / "datasets" / a.suite / sol.name
        if not task.exists():
            continue
        code = sol.read_text()
        for i in range(a.per_task):
            time.sleep(rng.uniform(0, a.pause))
            body = {"task_id": f"{a.suite}/{sol.stem}", "codes": [code + f"\n# {time.time_ns()} {i}\n"],
                    "reward_fn": "binary", "wait_s": 600}
            t0 = time.perf_counter()
            resp = post(a.url, body, 700)
            trip = (time.perf_counter() - t0) * 1e3
            v = resp["results"][0]
            rows.append({"task": sol.stem, "status": v["status"], "trip_ms": trip,
                         "queue_wait_ms": v.get("queue_wait_ms"), "exec_ms": v.get("exec_ms")})
    timed = [r for r in rows if r["queue_wait_ms"] is not None and r["exec_ms"] is not None]
    figs = {
        "round trip": [r["trip_ms"] for r in timed],
        "queue wait": [r["queue_wait_ms"] for r in timed],
        "exec": [r["exec_ms"] for r in timed],
        "round trip - exec": [r["trip_ms"] - r["exec_ms"] for r in timed],
    }
    statuses = {}
    for r in rows:
        statuses[r["status"]] = statuses.get(r["status"], 0) + 1
    summary = {k: {"p50": round(q(v, 0.5), 2), "p99": round(q(v, 0.99), 2), "n": len(v)} for k, v in figs.items()}
    if a.json:
        Path(a.json).write_text(json.dumps({"tag": a.tag, "rows": rows, "summary": summary, "statuses": statuses}))
    print(f"{a.tag or a.url}: {len(rows)} rewards, statuses {statuses}")
    for k, s in summary.items():
        print(f"  {k:18s} p50 {s['p50']:9.2f} ms  p99 {s['p99']:9.2f} ms  (n {s['n']})")
    return 0 if len(timed) == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
