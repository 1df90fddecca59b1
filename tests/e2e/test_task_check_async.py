"""POST /v1/tasks on a real `kernelgate serve`: past wait_s
it answers 202 with a Location to poll while the check runs on; a client that gives up
early is no server error, and its task is registered all the same."""

import json
import socket
import sys
import time
import urllib.request

import pytest

from conftest import REPO, Serve

sys.path.insert(0, str(REPO / "clients" / "python"))
from kernelgate_client import Client, KernelgateError  # noqa: E402

TASK = (REPO / "datasets" / "ci" / "1_add_relu.py").read_text()
# The same task, slowed down so that its check outlives a short client timeout.
SLOW = TASK.replace("        return torch.relu(x + y)", "        import time\n        time.sleep(1.0)\n        return torch.relu(x + y)")


def poll(s, location, timeout_s=120):
    deadline = time.monotonic() + timeout_s
    while True:
        status, check = s.get(location)
        assert status == 200, check
        if check["status"] != "running" or time.monotonic() > deadline:
            return check
        time.sleep(0.3)


def test_task_checks_run_on_after_the_request(tmp_path):
    assert SLOW != TASK
    s = Serve(tmp_path / "data", tmp_path, args=["--log-level", "info"]).start()
    try:
        # wait_s 0: 202 at once, with the check to poll.
        status, chk = s.post("/v1/tasks", {"id": "mine/async", "source": TASK + "\n# async\n", "wait_s": 0})
        assert status == 202 and chk["status"] == "running" and chk["task_id"] == "mine/async", chk
        assert s.last_headers["Location"] == chk["location"] and chk["location"].startswith("/v1/task-checks/tc_")
        done = poll(s, chk["location"])
        assert done["status"] == "registered" and done["task"]["id"] == "mine/async", done
        assert s.get("/v1/tasks/mine/async")[0] == 200
        # Within the default wait the answer is what it always was.
        status, task = s.post("/v1/tasks", {"id": "mine/sync", "source": TASK + "\n# sync\n"})
        assert status == 201 and task["id"] == "mine/sync", task
        # A refusal found after the 202 is the check's error.
        status, chk = s.post("/v1/tasks", {"id": "mine/broken", "source": "import torch\nclass Model(:\n", "wait_s": 0})
        assert status == 202, chk
        done = poll(s, chk["location"])
        assert done["status"] == "refused" and done["error"]["code"] == "task_invalid", done

        # A client that gives up: its socket times out while the check runs.
        body = json.dumps({"id": "mine/left", "source": SLOW}).encode()
        req = urllib.request.Request(s.url + "/v1/tasks", data=body, method="POST",
                                     headers={"Content-Type": "application/json"})
        try:
            urllib.request.urlopen(req, timeout=0.5)
            raise AssertionError("the check of a slow task finished within 0.5 s")
        except (socket.timeout, TimeoutError):
            pass
        deadline = time.monotonic() + 120
        while s.get("/v1/tasks/mine/left")[0] != 200:
            assert time.monotonic() < deadline, s.log()
            time.sleep(0.3)
        status, chk = s.get("/v1/task-checks/tc_unknown")
        assert status == 404 and chk["code"] == "task_check_not_found", chk

        # The Python client waits as long as its read timeout allows, then polls the check.
        client = Client(s.url, read_timeout_s=1.5, poll_s=0.2, timeout_s=120)
        task = client.register_task(SLOW + "\n# client\n", task_id="mine/client")
        assert task["id"] == "mine/client" and task["origin"] == "api", task
        assert client.register_task(SLOW + "\n# client\n", task_id="mine/client")["id"] == "mine/client"
        with pytest.raises(KernelgateError) as refused:
            client.register_task("import torch\nclass Model(:\n", task_id="mine/client-broken")
        assert refused.value.status == 422 and refused.value.code == "task_invalid", refused.value
    finally:
        assert s.stop() == 0, s.log()
    log = (tmp_path / f"serve-{s.starts}.log").read_text()
    assert "path=/v1/tasks status=5" not in log and "status=500" not in log, log[-3000:]
    assert "path=/v1/tasks status=" in log, "the request log line is missing, so the check above proves nothing"
