"""Retries are idempotent against a real `kernelgate serve`: a request repeated with one
Idempotency-Key (or one X-Request-ID) is answered from the first batch and logged once."""

import pyarrow.dataset as ds

from conftest import REPO

TASK = (REPO / "datasets" / "ci" / "1_add_relu.py").read_text()
KERNEL = (REPO / "datasets" / "solutions" / "ci" / "1_add_relu.py").read_text()


def test_a_retried_request_is_evaluated_and_logged_once(serve):
    s = serve.start()
    body = {"reference": TASK, "completions": [f"```python\n{KERNEL}\n# idem\n```", "no code here"],
            "reward_fn": "binary", "cache": False, "options": {"seeds": 1, "timing": False}, "wait_s": 120}
    batches = {}
    for header in ("Idempotency-Key", "X-Request-ID"):
        first = s.post("/v1/rewards", body, headers={header: f"step-1-{header}"})
        again = s.post("/v1/rewards", body, headers={header: f"step-1-{header}"})
        assert first[0] == again[0] == 200, (first, again)
        assert again[1]["batch_id"] == first[1]["batch_id"], (first, again)
        assert s.last_headers["Idempotent-Replayed"] == "true"
        assert again[1]["rewards"] == first[1]["rewards"] == [1.0, 0.0], again
        batches[header] = first[1]["batch_id"]
    status, err = s.post("/v1/rewards", dict(body, completions=["other"]), headers={"Idempotency-Key": "step-1-Idempotency-Key"})
    assert status == 422 and err["code"] == "idempotency_key_reused" and err["field"] == "Idempotency-Key", err
    assert s.stop() == 0, s.log()
    rows = ds.dataset(serve.data / "parquet" / "table=evaluations", format="parquet", partitioning="hive").to_table(
        columns=["batch_id", "eval_id"]).to_pylist()
    for header, batch_id in batches.items():
        mine = sorted(r["eval_id"] for r in rows if r["batch_id"] == batch_id)
        assert mine == [f"{batch_id}-00000", f"{batch_id}-00001"], (header, rows)
    assert len(rows) == 4, rows
