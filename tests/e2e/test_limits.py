"""Limits a real `kernelgate serve` keeps: a bounded queue under a flood, keys beyond loopback."""

import subprocess
import time

import pyarrow.dataset as ds
import pytest

from conftest import BIN, REPO, Serve

TASK = (REPO / "datasets" / "ci" / "1_add_relu.py").read_text()
KERNEL = (REPO / "datasets" / "solutions" / "ci" / "1_add_relu.py").read_text()


def test_a_flood_gets_429_with_retry_after_and_the_gateway_keeps_serving(tmp_path):
    s = Serve(tmp_path / "data", tmp_path, args=["--max-queued", "3"], env={"KERNELGATE_CONCURRENCY": "1"})
    s.start()
    try:
        status, body = s.post("/v1/rewards", {"reference": TASK, "wait_s": 120,
                                              "codes": [KERNEL + f"\n# {i}\n" for i in range(8)]})
        assert status == 429, body
        assert body["code"] == "queue_full" and "retry" in body["message"]
        assert int(s.last_headers["Retry-After"]) >= 1
        assert s.get("/healthz")[0] == 200
        # Once the queue has drained, the same gateway answers in full.
        deadline = time.monotonic() + 120
        while True:
            status, body = s.post("/v1/rewards", {"reference": TASK, "codes": [KERNEL], "wait_s": 120})
            if status != 429 or time.monotonic() > deadline:
                break
            time.sleep(1)
        assert status == 200 and body["results"][0]["status"] == "correct", body
    finally:
        assert s.stop() == 0, s.log()


def keys(data, *args):
    r = subprocess.run([str(BIN), "keys", *args, "--data", str(data)], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def test_beyond_loopback_keys_are_required_and_scoped(tmp_path):
    data = tmp_path / "data"
    # No key yet: serve refuses a non-loopback address, with a one-line reason.
    r = subprocess.run([str(BIN), "serve", "--addr", "0.0.0.0:0", "--data", str(data)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "key" in r.stderr.lower(), r.stderr
    reward_key = keys(data, "create", "--scopes", "reward", "--name", "trainer")
    admin_key = keys(data, "create", "--scopes", "admin", "--name", "ops")
    assert reward_key.startswith("kg_") and "trainer" in keys(data, "list")
    assert reward_key not in (data / "keys.json").read_text()      # stored hashed
    s = Serve(data, tmp_path, host="0.0.0.0").start()
    try:
        body = {"reference": TASK, "completions": ["no code here"], "wait_s": 60}
        status, err = s.post("/v1/rewards", body)
        assert status == 401 and err["code"] == "unauthorized", err
        status, err = s.post("/v1/rewards", body, key=admin_key)
        assert status == 403 and err["code"] == "forbidden", err
        status, resp = s.post("/v1/rewards", body, key=reward_key, headers={"X-Request-ID": "trainer-step-7"})
        assert status == 200 and resp["results"][0]["status"] == "invalid_submission", resp
        assert s.last_headers["X-Request-ID"] == "trainer-step-7"
        logged_batch = resp["batch_id"]
        assert s.get("/metrics", key=reward_key)[0] == 403
        status, text = s.get("/metrics", key=admin_key)
        assert status == 200 and b"kernelgate_" in text
        keys(data, "revoke", "trainer")
        status, err = s.post("/v1/rewards", body, key=reward_key)
        assert status == 401, err
    finally:
        assert s.stop() == 0, s.log()
    # Every row names the request and the key that asked for it.
    rows = ds.dataset(data / "parquet" / "table=evaluations", format="parquet", partitioning="hive").to_table(
        columns=["batch_id", "request_id", "client_id"]).to_pylist()
    mine = [r for r in rows if r["batch_id"] == logged_batch]
    assert mine == [{"batch_id": logged_batch, "request_id": "trainer-step-7", "client_id": "trainer"}], rows
