#!/usr/bin/env python3
"""Peaks of device memory during h200-grpo.sh runs (MEMPOLL=1): the GPU's (nvidia-smi
memory.used) and the judge service's (its process's used_memory), per run, from the polls
in OUT/mem.txt and OUT/apps.txt and each run's serve log (which names the service's pid).
Admission's budget is 92% of the GPU less 1 GiB (harness/worker.go): a peak above it
means memory outside the reservations."""

import argparse
import pathlib
import re


def polls(path):
    """[(t, [numbers])] from lines 't a, b' or 't a'."""
    out = []
    for line in pathlib.Path(path).read_text().splitlines():
        parts = line.replace(",", " ").split()
        try:
            out.append((float(parts[0]), [int(x) for x in parts[1:]]))
        except (ValueError, IndexError):
            continue
    return out


def peaks(out_dir):
    """{run: (GPU peak MiB, judge service peak MiB)} for each serve-*.log with a service pid."""
    d = pathlib.Path(out_dir)
    mem, apps = polls(d / "mem.txt"), polls(d / "apps.txt")
    res = {}
    for log in sorted(d.glob("serve-*.log")):
        m = re.search(r"judge service started \(pid (\d+)\)", log.read_text(errors="replace"))
        if not m:
            continue
        pid = int(m.group(1))
        seen = [(t, v[1]) for t, v in apps if len(v) == 2 and v[0] == pid]
        if not seen:
            continue
        lo, hi = seen[0][0], seen[-1][0]
        gpu = max((v[0] for t, v in mem if lo <= t <= hi and v), default=0)
        res[log.stem[len("serve-"):]] = (gpu, max(mb for _, mb in seen))
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", help="h200-grpo.sh's OUT")
    a = ap.parse_args()
    for run, (gpu, svc) in peaks(a.out).items():
        print(f"memory {run}: GPU peak {gpu / 1024:.1f} GiB, judge service peak {svc / 1024:.1f} GiB")


if __name__ == "__main__":
    main()
