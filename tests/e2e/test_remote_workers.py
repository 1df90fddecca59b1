"""Workers on other hosts: `kernelgate serve --nats-listen HOST:PORT
--workers 0` evaluates nothing itself; `kernelgate worker --nats nats://HOST:PORT` joins it
over NATS and answers POST /v1/rewards, and its verdicts land in the gateway's Parquet log.
Here both run on loopback in CPU mode; a worker with the wrong token is refused, and the
flags that cannot work together are refused with a clear error."""
import os
import re
import signal
import subprocess
import threading
import time

from conftest import BIN, REPO, Serve, free_port, logged_rows
from test_search_api import llm, sse  # noqa: F401 (llm is a fixture)

TASK = (REPO / "datasets" / "ci" / "1_add_relu.py").read_text()
KERNEL = (REPO / "datasets" / "solutions" / "ci" / "1_add_relu.py").read_text()


def start_worker(tmp_path, nats, name, env=None, extra=()):
    log = open(tmp_path / f"{name}.log", "wb")
    return subprocess.Popen([str(BIN), "worker", "--nats", nats, *extra],
                            env={**os.environ, "KERNELGATE_CONCURRENCY": "2", **(env or {})},
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)


def wait_ready(srv, timeout_s=120):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        status, body = srv.get("/readyz")
        if status == 200:
            return
        time.sleep(0.3)
    raise AssertionError(f"not ready: {body}\n{srv.log()}")


def stop(proc):
    proc.send_signal(signal.SIGTERM)
    try:
        return proc.wait(60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        raise


def test_a_gateway_without_workers_is_answered_by_a_worker_joined_over_nats(tmp_path):
    port = free_port()
    token = tmp_path / "token"
    token.write_text("s3cret-token\n")
    srv = Serve(tmp_path / "data", tmp_path, args=["--nats-listen", f"127.0.0.1:{port}", "--workers", "0",
                                                   "--nats-token-file", str(token)])
    srv.start(ready_path="/healthz")
    workers = []
    try:
        status, body = srv.get("/readyz")
        assert status == 503 and "no worker" in str(body), body      # nobody to evaluate yet
        bad = start_worker(tmp_path, f"nats://127.0.0.1:{port}", "worker-bad", {"KERNELGATE_NATS_TOKEN": "wrong"})
        assert bad.wait(60) != 0
        assert "authorization" in (tmp_path / "worker-bad.log").read_text().lower()
        workers.append(start_worker(tmp_path, f"nats://127.0.0.1:{port}", "worker-1",
                                    {"KERNELGATE_NATS_TOKEN": "s3cret-token"}))
        wait_ready(srv)
        time.sleep(2.1)                                   # the gateway's roster refresh
        status, gpus = srv.get("/v1/gpus")
        assert status == 200 and gpus["mode"] == "cpu_interpreter" and gpus["concurrency"] == 2, gpus
        assert gpus["gpus"] == [] and "1 announced" in gpus["reason"], gpus
        codes = [KERNEL + f"\n# remote {i}\n" for i in range(3)] + ["def broken(:\n"]
        status, resp = srv.post("/v1/rewards", {"reference": TASK, "codes": codes, "wait_s": 300})
        assert status == 200, resp
        assert [r["status"] for r in resp["results"]] == ["correct"] * 3 + ["compile_error"], resp
        assert all(r["timing_mode"] == "cpu_interpreter" for r in resp["results"][:3])
        assert stop(workers.pop()) == 0
    finally:
        for w in workers:
            os.killpg(w.pid, signal.SIGKILL)
        assert srv.stop() == 0, srv.log()
    rows = logged_rows(srv.data, "evaluations", ["batch_id", "status"])
    assert sorted(r["status"] for r in rows if r["batch_id"] == resp["batch_id"]) == \
        ["compile_error", "correct", "correct", "correct"]


def test_flags_that_cannot_work_together_are_refused(tmp_path):
    cases = [
        (["serve", "--workers", "2"], "--workers takes 0"),
        (["serve", "--nats-listen", "0.0.0.0:4999"], "needs a token"),
        (["serve", "--nats", "nats://127.0.0.1:1", "--nats-listen", "127.0.0.1:4999"], "give one of them"),
        (["serve", "--nats-creds", "x.creds"], "for an external --nats"),
        (["worker"], "--nats is required"),
        (["worker", "--nats", "not a url"], "invalid NATS URL"),
    ]
    for args, want in cases:
        p = subprocess.run([str(BIN), *args, "--data", str(tmp_path / "d")] if args[0] == "serve" else [str(BIN), *args],
                           capture_output=True, text=True, timeout=60)
        assert p.returncode == 2 and want in p.stderr, (args, p.returncode, p.stderr)


SLOW = KERNEL + """

import time as _kg_time
_kg_forward = ModelNew.forward
def _kg_slow(self, *a):
    _kg_time.sleep(SECONDS)
    return _kg_forward(self, *a)
ModelNew.forward = _kg_slow
"""


def eval_rows(data):
    return logged_rows(data, "evaluations", ["eval_id", "batch_id"])


def wait_rows(srv, want, timeout_s=60):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        ids = [r["eval_id"] for r in eval_rows(srv.data)]
        if want <= set(ids):
            return ids
        time.sleep(0.5)
    raise AssertionError(f"rows {want} not all logged: {eval_rows(srv.data)}")


def wait_log(path, text, timeout_s=60):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if path.exists() and text in path.read_text(errors="replace"):
            return
        time.sleep(0.1)
    raise AssertionError(f"{text!r} never in {path}")


def post_async(srv, body, headers=None):
    out = {}

    def send():
        try:
            out["resp"] = srv.post("/v1/rewards", body, timeout_s=300, headers=headers)
        except OSError as e:
            out["err"] = e
    t = threading.Thread(target=send)
    t.start()
    return t, out


def test_a_worker_killed_mid_job_is_replaced_and_the_job_logged_once(tmp_path):
    port = free_port()
    nats = f"nats://127.0.0.1:{port}"
    srv = Serve(tmp_path / "data", tmp_path, args=["--nats-listen", f"127.0.0.1:{port}", "--workers", "0"])
    srv.start(ready_path="/healthz")
    ack = ["--job-ack-wait", "2s", "--log-level", "debug"]
    a = start_worker(tmp_path, nats, "worker-a", extra=ack)
    b = None
    try:
        wait_ready(srv)
        t, out = post_async(srv, {"reference": TASK, "codes": [SLOW.replace("SECONDS", "0.7")], "wait_s": 300})
        wait_log(tmp_path / "worker-a.log", "evaluating")
        os.killpg(a.pid, signal.SIGKILL)           # the worker and its zygote, mid-evaluation
        a.wait()
        assert "msg=done" not in (tmp_path / "worker-a.log").read_text()
        b = start_worker(tmp_path, nats, "worker-b", extra=ack)
        t.join(240)
        status, resp = out["resp"]
        assert status == 200 and resp["results"][0]["status"] == "correct", resp
        assert "delivery=2" in (tmp_path / "worker-b.log").read_text()    # the same job, delivered again
        assert stop(b) == 0
        b = None
    finally:
        for w in (a, b):
            if w is not None and w.poll() is None:
                os.killpg(w.pid, signal.SIGKILL)
        assert srv.stop() == 0, srv.log()
    ids = [r["eval_id"] for r in eval_rows(srv.data) if r["batch_id"] == resp["batch_id"]]
    assert ids == [f"{resp['batch_id']}-00000"], ids           # logged once


def test_the_gateway_restarted_under_its_workers_loses_nothing(tmp_path):
    port = free_port()
    nats = f"nats://127.0.0.1:{port}"
    srv = Serve(tmp_path / "data", tmp_path, args=["--nats-listen", f"127.0.0.1:{port}", "--workers", "0"])
    srv.start(ready_path="/healthz")
    w = start_worker(tmp_path, nats, "worker", extra=["--log-level", "info"])
    try:
        wait_ready(srv)
        body = {"reference": TASK, "codes": [SLOW.replace("SECONDS", "0.3") + f"\n# {i}\n" for i in range(4)],
                "wait_s": 300}
        key = {"Idempotency-Key": "restart-under-workers"}
        t, out = post_async(srv, body, key)
        wait_log(tmp_path / "worker.log", "pulling jobs")
        time.sleep(2.0)
        srv.kill9()                                  # the gateway and its NATS server, mid-batch
        t.join(30)
        assert "resp" not in out or out["resp"][0] != 200, "the batch finished before the kill: nothing was cut"
        srv.start(ready_path="/healthz")             # same data, same NATS port: the worker reconnects
        wait_ready(srv, 120)
        status, resp = srv.post("/v1/rewards", body, timeout_s=300, headers=key)
        assert status == 200, resp
        assert [r["status"] for r in resp["results"]] == ["correct"] * 4, resp
        assert w.poll() is None, "the worker exited when its gateway went away"
        want = {f"{resp['batch_id']}-{i:05d}" for i in range(4)}
        ids = wait_rows(srv, want)
        assert sorted(i for i in ids if i in want) == sorted(want)      # each exactly once
    finally:
        if w.poll() is None:
            stop(w)
        srv.stop()


def test_a_search_on_a_gateway_without_workers_evaluates_on_a_remote_worker(tmp_path, llm):
    # Searches queue their evaluations (ahead of bulk batches) like any job: a gateway
    # with --workers 0 runs them on the workers that joined it, and each step's
    # evaluation is one row of the evaluations table, under the step's eval_id. The
    # scripted LLM proposes one kernel each time: the first step runs on the worker,
    # the next two are answered by the result cache from it.
    port = free_port()
    nats = f"nats://127.0.0.1:{port}"
    srv = Serve(tmp_path / "data", tmp_path, args=["--nats-listen", f"127.0.0.1:{port}", "--workers", "0",
                                                   "--llm-url", llm, "--model", "scripted"])
    srv.start(ready_path="/healthz")
    w = start_worker(tmp_path, nats, "worker", extra=["--log-level", "debug"])
    try:
        wait_ready(srv)
        status, ref = srv.post("/v1/searches", {"task_id": "ci/1_add_relu", "steps": 3, "policy": "sample"})
        assert status == 202, ref
        events = sse(srv, f"/v1/searches/{ref['search_id']}/events")
        steps = [d for e, d in events if e == "step"]
        assert [s["verdict"]["status"] for s in steps] == ["correct"] * 3, steps
        assert events[-1][1]["state"] == "done", events[-1]
        assert len(re.findall(r"msg=evaluating .*job=q_", (tmp_path / "worker.log").read_text())) == 1
        assert [(s["cached"], s.get("source_eval_id")) for s in steps] == \
            [(False, None)] + [(True, steps[0]["eval_id"])] * 2, steps
        want = {s["eval_id"] for s in steps}
        deadline = time.monotonic() + 60
        while not want <= {r["eval_id"] for r in eval_rows(srv.data)} and time.monotonic() < deadline:
            time.sleep(0.5)
    finally:
        if w.poll() is None:
            stop(w)
        assert srv.stop() == 0, srv.log()
    rows = [r["eval_id"] for r in eval_rows(srv.data)]
    assert sorted(rows) == sorted(want), rows          # the steps' rows, once each; no row of the queue's own


def test_a_batch_requiring_an_environment_runs_only_where_it_is(tmp_path):
    # Workers advertise their environment; a batch may require one (options.requires):
    # it is queued where only such workers pull, and refused with a clear 503 while no
    # worker here has it, rather than left in the queue for one that may never come.
    port = free_port()
    srv = Serve(tmp_path / "data", tmp_path, args=["--nats-listen", f"127.0.0.1:{port}", "--workers", "0"])
    srv.start(ready_path="/healthz")
    w = start_worker(tmp_path, f"nats://127.0.0.1:{port}", "worker")
    try:
        wait_ready(srv)
        time.sleep(2.1)                                   # the gateway's roster refresh
        status, first = srv.post("/v1/rewards", {"reference": TASK, "codes": [KERNEL + "\n# env\n"], "wait_s": 120})
        assert status == 200 and first["results"][0]["status"] == "correct", first
        env = first["results"][0]["env"]
        mine = {"torch": env["torch"].split("+")[0], "triton": env["triton"].split("+")[0]}
        status, ok = srv.post("/v1/rewards", {"reference": TASK, "codes": [KERNEL + "\n# required\n"],
                                              "options": {"requires": mine}, "wait_s": 120})
        assert status == 200 and ok["results"][0]["status"] == "correct", ok
        for other in ({"gpu": "NVIDIA H200"}, {**mine, "torch": "0.0.1"}):
            status, err = srv.post("/v1/rewards", {"reference": TASK, "codes": [KERNEL], "options": {"requires": other},
                                                   "wait_s": 10})
            assert status == 503 and err["code"] == "not_ready" and "no worker here can run" in err["message"], err
            assert err.get("field") == "options.requires", err
        status, bad = srv.post("/v1/rewards", {"reference": TASK, "codes": [KERNEL], "options": {"requires": {"gpu": "--"}}})
        assert status == 400 and "requires.gpu" in bad["message"], bad
    finally:
        if w.poll() is None:
            stop(w)
        assert srv.stop() == 0, srv.log()
