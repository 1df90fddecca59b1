"""One GRPO-sized group end to end through a running gateway: 64 completions of the ci
task in one POST /v1/rewards, three ways, each timed on the client's clock:

  distinct   64 honest kernels that differ (a comment each): 64 evaluations
  identical  the same honest completion 64 times: evaluated once, fanned out
  no code    64 completions without code: answered by the gateway alone, which is
             its own overhead for a group (parse, extract, queue, record, answer)

usage: python3 scripts/measure/group64.py http://127.0.0.1:8080   (e.g. after `make serve`)
"""
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "clients" / "python"))

from kernelgate_client import Client  # noqa: E402

N = 64
TASK = "ci/1_add_relu"
HONEST = (REPO / "datasets" / "solutions" / "ci" / "1_add_relu.py").read_text()


def fenced(code):
    return f"Here is the kernel.\n```python\n{code}\n```<|im_end|>"


def run(client, name, completions):
    t0 = time.monotonic()
    resp = client.rewards(task_id=TASK, completions=completions, reward_fn="binary")
    wall = time.monotonic() - t0
    statuses = {}
    for r in resp["results"]:
        statuses[r["status"]] = statuses.get(r["status"], 0) + 1
    shared = sum(1 for x in resp.get("shared") or [] if x)
    cached = sum(1 for x in resp.get("cached") or [] if x)
    print(f"{name:9s} {N} completions: {wall:6.2f} s wall, {statuses}, shared {shared}, cached {cached}", flush=True)
    return wall


def main(url):
    client = Client(url, read_timeout_s=600)
    stamp = time.time_ns()   # fresh code each run, so the result cache does not answer
    run(client, "no code", ["I would rather not write a kernel."] * N)
    run(client, "identical", [fenced(f"# run {stamp}\n{HONEST}")] * N)
    run(client, "distinct", [fenced(f"# run {stamp} variant {i}\n{HONEST}") for i in range(N)])


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8080")
