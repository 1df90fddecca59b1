"""POST /v1/redteam on a real `kernelgate serve` (CPU, the real harness): 202 at once, one
batch per task through the queue, the report once every batch is in. A key without the
admin scope is refused."""

import subprocess
import time

from conftest import BIN, REPO, Serve

SOLUTION = (REPO / "datasets" / "solutions" / "ci" / "1_add_relu.py").read_text()


def test_redteam_runs_through_the_queue(tmp_path):
    s = Serve(tmp_path / "data", tmp_path).start()
    try:
        body = {"tasks": [{"task_id": "ci/1_add_relu", "solution": SOLUTION}],
                "classes": ["cache_pointer", "decoy_dead_kernel", "exit_early", "side_stream"],
                "options": {"seeds": 2}}
        status, run = s.post("/v1/redteam", body)
        assert status == 202 and run["status"] == "running" and run["total"] == 1, run
        assert s.last_headers["Location"] == run["location"]
        deadline = time.monotonic() + 180
        while run["status"] == "running" and time.monotonic() < deadline:
            time.sleep(0.5)
            status, run = s.get(run["location"])
            assert status == 200, run
        assert run["status"] == "done" and run["done"] == 1, run
        r = run["report"]
        by = {c["name"]: c for c in r["classes"]}
        # Three classes caught by the real judge; the GPU-only one skipped on CPU workers.
        assert r["ok"] and r["caught"] == 3 and r["missed"] == 0 and r["skipped"] == 1, r
        assert by["decoy_dead_kernel"]["flags"] == {"decoy": 1}, by["decoy_dead_kernel"]
        assert by["exit_early"]["flags"] == {"exit": 1}, by["exit_early"]
        assert [c["status"] for c in r["controls"]] == ["correct"], r["controls"]
        # The evaluations are a batch like any other: control and the three variants.
        status, batch = s.get("/v1/batches/" + run["batches"][0])
        assert status == 200 and batch["total"] == 4 and batch["status"] == "done", batch

        # Admin scope: a reward key is refused (a key, once it exists, is required at once).
        key = subprocess.run([str(BIN), "keys", "create", "--scopes", "reward", "--name", "trainer",
                              "--data", str(s.data)], capture_output=True, text=True, timeout=30,
                             check=True).stdout.strip()
        status, err = s.post("/v1/redteam", body, key=key)
        assert status == 403 and err["code"] == "forbidden", err
    finally:
        assert s.stop() == 0, s.log()
