"""/v1/searches on a real `kernelgate serve` (CPU mode) with scripts/scripted_llm.py as
the LLM: a search streamed over SSE to its end, its status and best kernel, the skills
list, and a search that survives a restart of the server, then is cancelled; its steps
are read back from the search_steps table with pyarrow."""

import json
import subprocess
import sys
import time
import urllib.request

import pyarrow.dataset as ds
import pytest

from conftest import REPO, Serve, free_port

KERNEL = REPO / "datasets" / "solutions" / "ci" / "1_add_relu.py"


@pytest.fixture
def llm():
    port = free_port()
    p = subprocess.Popen([sys.executable, str(REPO / "scripts" / "scripted_llm.py"), "--port", str(port),
                          "--kernel", str(KERNEL)], stderr=subprocess.PIPE)
    for _ in range(100):  # until it listens
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=1)
        except urllib.error.HTTPError:
            break
        except OSError:
            time.sleep(0.1)
    yield f"http://127.0.0.1:{port}/v1"
    p.kill()
    p.wait()


def serve_with(tmp_path, llm):
    return Serve(tmp_path / "data", tmp_path, args=["--llm-url", llm, "--model", "scripted"]).start()


def sse(srv, path):
    """(event, data) pairs of an SSE stream until its `end` event."""
    out, event = [], None
    with urllib.request.urlopen(srv.url + path, timeout=300) as r:
        for raw in r:
            line = raw.decode().rstrip("\n")
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: "):
                out.append((event, json.loads(line[6:])))
                if event == "end":
                    return out
    return out


def test_search_streams_to_its_end(tmp_path, llm):
    srv = serve_with(tmp_path, llm)
    try:
        status, ref = srv.post("/v1/searches", {"task_id": "ci/1_add_relu", "steps": 3, "policy": "sample"})
        assert status == 202 and ref["state"] == "running", ref
        sid = ref["search_id"]
        events = sse(srv, f"/v1/searches/{sid}/events")
        steps = [d for e, d in events if e == "step"]
        assert [s["seq"] for s in steps] == [1, 2, 3], steps
        assert all(s["action"] == "sample" and s["verdict"]["status"] == "correct" for s in steps)
        # One kernel proposed three times: run once, then answered from the result cache.
        assert [s["cached"] for s in steps] == [False, True, True], steps
        assert all(s["source_eval_id"] == steps[0]["eval_id"] for s in steps[1:]), steps
        assert events[-1][0] == "end" and events[-1][1]["state"] == "done"
        status, st = srv.get(f"/v1/searches/{sid}")
        assert status == 200 and st["steps"] == 3 and st["best"]["verdict"]["status"] == "correct"
        assert st["best"]["code"].strip() == KERNEL.read_text().strip()
        assert st["tokens_in"] > 0 and st["tokens_out"] > 0
        status, sk = srv.get("/v1/skills")
        assert status == 200 and sk == {"skills": []}, sk
        status, bad = srv.post("/v1/searches", {"task_id": "ci/no_such_task", "steps": 3})
        assert status == 404 and bad["code"] == "task_not_found" and bad["field"] == "task_id", bad
        status, _ = srv.get("/v1/searches/s_nope")
        assert status == 404
    finally:
        assert srv.stop() == 0, srv.log()


def test_search_survives_a_restart(tmp_path, llm):
    srv = serve_with(tmp_path, llm)
    # The scripted LLM proposes one kernel, so every step after the first is a cache hit
    # and fast: the most steps a search may have, which it cannot spend before the
    # restart and the cancel.
    status, ref = srv.post("/v1/searches", {"task_id": "ci/1_add_relu", "steps": 10000, "policy": "sample"})
    assert status == 202, ref
    sid = ref["search_id"]
    deadline = time.time() + 120
    while srv.get(f"/v1/searches/{sid}")[1]["steps"] < 2:
        assert time.time() < deadline, srv.log()
        time.sleep(0.5)
    assert srv.stop() == 0, srv.log()
    srv = serve_with(tmp_path, llm)
    try:
        status, st = srv.get(f"/v1/searches/{sid}")
        assert status == 200 and st["state"] == "running", st
        first = st["steps"]
        deadline = time.time() + 120
        while srv.get(f"/v1/searches/{sid}")[1]["steps"] <= first:
            assert time.time() < deadline, srv.log()
            time.sleep(0.5)
        status, st = srv.request("DELETE", f"/v1/searches/{sid}")
        assert status == 200, st
        deadline = time.time() + 60
        while srv.get(f"/v1/searches/{sid}")[1]["state"] == "running":
            assert time.time() < deadline, srv.log()
            time.sleep(0.2)
        status, st = srv.get(f"/v1/searches/{sid}")
        assert st["state"] == "cancelled" and st["steps"] > first, st
    finally:
        assert srv.stop() == 0, srv.log()
    rows = ds.dataset(tmp_path / "data" / "parquet" / "table=search_steps", format="parquet",
                      partitioning="hive").to_table().to_pylist()
    seqs = sorted(r["seq"] for r in rows if r["search_id"] == sid)
    assert seqs == list(range(1, st["steps"] + 1)), seqs  # every step once, across the restart


def test_unreachable_llm_fails_the_search_not_the_gateway(tmp_path, llm):
    srv = serve_with(tmp_path, llm)
    try:
        dead = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there
        status, ref = srv.post("/v1/searches", {"task_id": "ci/1_add_relu", "steps": 3,
                                                "llm": {"base_url": dead, "api_key": "sk-secret-do-not-echo"}})
        assert status == 202, ref
        events = sse(srv, f"/v1/searches/{ref['search_id']}/events")
        end = events[-1]
        assert end[0] == "end" and end[1]["state"] == "failed", end
        assert all(d.get("error") for e, d in events if e == "step"), events
        assert "sk-secret-do-not-echo" not in json.dumps(events) + srv.log()
        # the gateway itself is unaffected
        status, resp = srv.post("/v1/rewards", {"task_id": "ci/1_add_relu", "reward_fn": "binary",
                                                "completions": ["```python\n" + KERNEL.read_text() + "```"]})
        assert status == 200 and resp["rewards"] == [1.0], resp
    finally:
        assert srv.stop() == 0, srv.log()
