"""The caps a real `kernelgate serve` puts on timeout_s and memory_limit_mb: above a cap is
400 option_above_cap naming the cap and its flag, on every endpoint that takes options; at a
cap the evaluation runs; without --max-memory-mb the cap is the host's memory over the
evaluation slots."""

import re

import pytest

from conftest import REPO, Serve

TASK = (REPO / "datasets" / "ci" / "1_add_relu.py").read_text()
KERNEL = (REPO / "datasets" / "solutions" / "ci" / "1_add_relu.py").read_text()

CAP_TIMEOUT, CAP_MEMORY = 60, 2048

# Each endpoint that takes evaluation options, with a body carrying `options`.
BODIES = {
    "/v1/rewards": lambda o: {"task_id": "ci/1_add_relu", "codes": [KERNEL], "options": o},
    "/v1/evaluations": lambda o: {"task_id": "ci/1_add_relu", "code": KERNEL, "options": o},
    "/v1/episodes": lambda o: {"task_id": "ci/1_add_relu", "options": o},
    "/openrlhf/reward": lambda o: {"query": ["x"], "labels": ["ci/1_add_relu"], "options": o},
}


@pytest.fixture(scope="module")
def capped(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("caps")
    srv = Serve(tmp / "data", tmp, args=["--max-timeout-s", str(CAP_TIMEOUT), "--max-memory-mb", str(CAP_MEMORY)]).start()
    yield srv
    assert srv.stop() == 0, srv.log()


@pytest.mark.parametrize("path", list(BODIES))
@pytest.mark.parametrize("option,value,message", [
    ("timeout_s", 3600, f"timeout_s 3600 is above this server's cap of {CAP_TIMEOUT} (--max-timeout-s)"),
    ("memory_limit_mb", 32768, f"memory_limit_mb 32768 is above this server's cap of {CAP_MEMORY} (--max-memory-mb)"),
])
def test_an_option_above_a_cap_is_a_400_naming_the_cap(capped, path, option, value, message):
    status, err = capped.post(path, BODIES[path]({option: value}))
    assert status == 400, err
    assert err == {"code": "option_above_cap", "field": f"options.{option}", "message": message}


def test_at_the_caps_the_evaluation_runs(capped):
    opts = {"timeout_s": CAP_TIMEOUT, "memory_limit_mb": CAP_MEMORY, "seeds": 2, "require_triton": False}
    status, batch = capped.post("/v1/rewards", {"reference": TASK, "codes": [KERNEL], "options": opts, "wait_s": 120})
    assert status == 200 and batch["results"][0]["status"] == "correct", batch


def test_without_max_memory_mb_the_cap_is_the_hosts_memory_over_the_slots(tmp_path):
    # conftest's serve runs 2 slots (KERNELGATE_CONCURRENCY=2).
    mem_total_mib = int(re.search(r"^MemTotal:\s+(\d+) kB", open("/proc/meminfo").read(), re.M)[1]) // 1024
    s = Serve(tmp_path / "data", tmp_path).start()
    try:
        status, err = s.post("/v1/evaluations", {"reference": TASK, "code": KERNEL,
                                                 "options": {"memory_limit_mb": 10**7}})
        assert status == 400 and err["code"] == "option_above_cap", err
        cap = int(re.fullmatch(r"memory_limit_mb 10000000 is above this server's cap of (\d+) \(--max-memory-mb\)",
                               err["message"])[1])
        # A cgroup limit can only lower it; the floor is 1024.
        assert 1024 <= cap <= max(1024, mem_total_mib // 2), (cap, mem_total_mib)
        status, err = s.post("/v1/evaluations", {"reference": TASK, "code": KERNEL, "options": {"timeout_s": 601}})
        assert status == 400 and err["message"] == "timeout_s 601 is above this server's cap of 600 (--max-timeout-s)", err
    finally:
        assert s.stop() == 0, s.log()
