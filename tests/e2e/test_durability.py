"""kill -9 of `kernelgate serve` mid-batch, then a restart: every acknowledged request's
rows are in the Parquet log exactly once, and no evaluation is logged twice."""

import collections
import threading
import time

from conftest import REPO, logged_rows

TASK = (REPO / "datasets" / "ci" / "1_add_relu.py").read_text()
KERNEL = (REPO / "datasets" / "solutions" / "ci" / "1_add_relu.py").read_text()


def eval_ids(data):
    return [r["eval_id"] for r in logged_rows(data, "evaluations", ["eval_id"])]


def test_kill9_then_restart_logs_every_acknowledged_row_exactly_once(serve):
    serve.start()
    acked, lock = {}, threading.Lock()

    def send(i):
        body = {"reference": TASK, "codes": [KERNEL + f"\n# request {i} item {j}\n" for j in range(2)],
                "wait_s": 300}
        try:
            status, resp = serve.post("/v1/rewards", body, timeout_s=300)
        except OSError:
            return                       # cut off by the kill: not acknowledged
        if status == 200:
            with lock:
                acked[resp["batch_id"]] = len(resp["results"])

    threads = [threading.Thread(target=send, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 180
    while len(acked) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(acked) >= 2, f"no request finished before the kill:\n{serve.log()}"
    serve.kill9()                        # mid-batch: other requests are queued or running
    for t in threads:
        t.join(60)
    before_restart = dict(acked)
    assert len(before_restart) < 8, "every request finished before the kill: nothing was cut"

    serve.start()
    status, resp = serve.post("/v1/rewards", {"reference": TASK, "codes": [KERNEL + "\n# after\n"], "wait_s": 300})
    assert status == 200, resp
    acked[resp["batch_id"]] = 1

    want = {f"{b}-{i:05d}" for b, n in acked.items() for i in range(n)}
    # Events the sink had in hand at the kill come back after the bus's EventAckWait (20 s).
    deadline = time.monotonic() + 150
    while time.monotonic() < deadline and not want <= set(eval_ids(serve.data)):
        time.sleep(1)
    assert serve.stop() == 0, serve.log()

    ids = eval_ids(serve.data)
    missing = want - set(ids)
    assert not missing, f"acknowledged rows missing after restart: {sorted(missing)[:5]}"
    twice = [k for k, n in collections.Counter(ids).items() if n > 1]
    assert not twice, f"rows logged more than once: {twice[:5]}"
