#!/usr/bin/env python3
"""What admission counted against what the GPU held, from an h200-grpo.sh run with
MEMPOLL=1 and KERNELGATE_ADMISSION_LOG (the zygote's admission events, one JSON line
each: kgharness.zygote.admissionlog.AdmissionLog) beside nvidia-smi's per-process memory.

Prints, per task, what an evaluation reserved against what its two runners held at
their peak; then the polls where the GPU held more than admission's budget, split into
the judge service, the runners of evaluations holding a reservation (against what
those reserved) and processes of no holder.

usage: python3 scripts/measure/admission_trace.py OUT [--log OUT/admission-on.jsonl] [--serve OUT/serve-on.log]
"""

import argparse
import bisect
import collections
import json
import pathlib
import re
import statistics

from mem_peaks import polls


def load(log):
    recs = []
    for line in pathlib.Path(log).read_text().splitlines():
        try:
            recs.append(json.loads(line))
        except ValueError:
            continue
    return recs


def holds(recs):
    """{id: {"key", "pids", "from", "to", "mb" (the most it held)}} from grant/more/release."""
    out = {}
    for r in recs:
        i = r.get("id")
        if i is None:
            continue
        h = out.setdefault(i, {"key": r.get("key"), "pids": set(), "from": None, "to": None, "mb": 0.0,
                               "asked": None})
        h["pids"].update(v for v in (r.get("pids") or {}).values() if isinstance(v, int))
        if r["ev"] == "request":
            h["asked"] = r["t"]
        elif r["ev"] == "grant":
            h["from"], h["mb"] = r["t"], r["mb"]
        elif r["ev"] == "more":
            h["mb"] += r["mb"]
        elif r["ev"] == "release":
            h["to"] = r["t"]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--log")
    ap.add_argument("--serve")
    ap.add_argument("--top", type=int, default=8)
    a = ap.parse_args()
    d = pathlib.Path(a.out)
    log = pathlib.Path(a.log) if a.log else next(iter(sorted(d.glob("admission-*.jsonl"))))
    serve = pathlib.Path(a.serve) if a.serve else d / ("serve-" + log.stem.split("-", 1)[1] + ".log")
    m = re.search(r"judge service started \(pid (\d+)\)", serve.read_text(errors="replace"))
    svc = int(m.group(1)) if m else None
    recs = load(log)
    budget = next((r["budget"] for r in recs if r["ev"] == "start"), None)
    hs = holds(recs)
    apps = collections.defaultdict(dict)
    for t, v in polls(d / "apps.txt"):
        if len(v) == 2:
            apps[t][v[0]] = v[1]
    times = sorted(apps)
    gpu = dict((t, v[0]) for t, v in polls(d / "mem.txt") if v)

    # Per task: reserved against the runners' peak while held.
    by_key = collections.defaultdict(list)
    for i, h in hs.items():
        if h["from"] is None or not h["pids"]:
            continue
        to = h["to"] or times[-1]
        peak = max((sum(apps[t].get(p, 0) for p in h["pids"]) for t in times if h["from"] <= t <= to), default=0)
        by_key[h["key"]].append((h["mb"], peak))
    print(f"budget {budget} MiB; {len(hs)} evaluations; judge service pid {svc}")
    print("task      n  reserved median  runners' peak median  peak / reserved (median, max)")
    for k, xs in sorted(by_key.items()):
        rs = [p / r for r, p in xs if r > 0]
        print(f"{k}  {len(xs):3d}  {statistics.median(r for r, _ in xs) / 1024:8.1f} GiB  "
              f"{statistics.median(p for _, p in xs) / 1024:8.1f} GiB  "
              f"{statistics.median(rs) if rs else 0:5.2f} {max(rs) if rs else 0:5.2f}")

    # Admission's state at each poll: the last event at or before it.
    ts = [r["t"] for r in recs]
    over = []
    for t in times:
        i = bisect.bisect_right(ts, t) - 1
        if i < 0:
            continue
        st = recs[i]
        held_now = {j: h for j, h in hs.items() if h["from"] is not None and h["from"] <= t and
                    (h["to"] is None or t < h["to"])}
        mine = set().union(*[h["pids"] for h in held_now.values()]) if held_now else set()
        procs = apps[t]
        service = procs.get(svc, 0)
        runners = sum(v for p, v in procs.items() if p in mine)
        stray = {p: v for p, v in procs.items() if p != svc and p not in mine}
        g = gpu.get(min(gpu, key=lambda x: abs(x - t))) if gpu else 0
        over.append((g, t, st.get("used"), st.get("store"), service, runners,
                     sum(h["mb"] for h in held_now.values()), sum(stray.values()), len(held_now), len(stray)))
    over.sort(reverse=True)
    print(f"\nthe {a.top} polls with the most on the GPU (MiB): GPU, admission used (store), "
          f"service, runners held / reserved, processes of no holder")
    for g, t, used, store, service, runners, reserved, stray, n, ns in over[:a.top]:
        print(f"  {g:7.0f}  used {used or 0:7.0f} ({store or 0:5.0f})  service {service:6.0f}  "
              f"runners {runners:6.0f} / {reserved:6.0f} ({n} holders)  no holder {stray:6.0f} ({ns})")
    if budget:
        n_over = sum(1 for o in over if o[0] > budget)
        print(f"polls over the budget: {n_over} of {len(over)}")


if __name__ == "__main__":
    main()
