"""GET /v1/batches/{id}/code: a batch's code comes back from the Parquet log once the sink
has written its items (the dashboard's link from an item to its code)."""

import time

from conftest import REPO

TASK = (REPO / "datasets" / "ci" / "1_add_relu.py").read_text()
KERNEL = (REPO / "datasets" / "solutions" / "ci" / "1_add_relu.py").read_text()


def test_an_items_code_and_completion_come_back_from_the_log(serve):
    serve.start()
    completion = "Here it is.\n```python\n" + KERNEL + "\n# item 1\n```\nDone."
    status, batch = serve.post("/v1/rewards", {"reference": TASK, "completions": [
        "```python\n" + KERNEL + "\n# item 0\n```", completion, "no code at all"], "wait_s": 300})
    assert status == 200 and batch["status"] == "done", batch
    deadline, code = time.monotonic() + 60, None
    while time.monotonic() < deadline:
        status, code = serve.get(f"/v1/batches/{batch['batch_id']}/code")
        assert status == 200, code
        if code["logged"] == code["total"]:
            break
        time.sleep(0.5)
    assert (code["batch_id"], code["total"], code["logged"]) == (batch["batch_id"], 3, 3), code
    items = code["items"]
    assert [it["index"] for it in items] == [0, 1, 2], items
    assert [it["eval_id"] for it in items] == [f"{batch['batch_id']}-{i:05d}" for i in range(3)], items
    assert items[0]["code"].rstrip().endswith("# item 0") and "```" not in items[0]["code"], items[0]
    assert items[1]["completion"] == completion and items[1]["code"].rstrip().endswith("# item 1"), items[1]
    assert items[2]["completion"] == "no code at all", items[2]

    status, missing = serve.get("/v1/batches/b_nosuchbatch/code")
    assert status == 404 and missing["code"] == "batch_not_found", missing
    assert serve.stop() == 0, serve.log()
