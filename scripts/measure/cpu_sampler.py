"""Samples the host's CPU busy share every 0.25 s into a file (profiling aid for h200-harness.sh)."""
import sys
import time


def snap():
    f = [int(x) for x in open("/proc/stat").readline().split()[1:]]
    idle = f[3] + f[4]
    return sum(f), idle


out = open(sys.argv[1], "w", buffering=1)
t0, (tot, idle) = time.monotonic(), snap()
while True:
    time.sleep(0.25)
    t, i = snap()
    out.write(f"{time.monotonic() - t0:.2f} {1 - (i - idle) / max(t - tot, 1):.3f}\n")
    tot, idle = t, i
