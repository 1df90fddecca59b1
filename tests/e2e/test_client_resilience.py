"""The Python client's retries, backoff, polling, typed errors and concurrent groups,
against scripted HTTP servers and, once, a live `kernelgate serve` started late."""

import collections
import json
import socket
import struct
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from conftest import REPO, Serve, free_port

sys.path.insert(0, str(REPO / "clients" / "python"))

from kernelgate_client import (Client, KernelgateError, KernelgateTimeout,  # noqa: E402
                               KernelgateUnavailable, rewards_by_group)
from kernelgate_client import client as client_mod  # noqa: E402

ADD = (REPO / "datasets" / "ci" / "1_add_relu.py").read_text()
ADD_OK = (REPO / "datasets" / "solutions" / "ci" / "1_add_relu.py").read_text()

RESET = object()  # a script's answer: reset the connection instead of answering


def batch(batch_id="b_1", status="done", rewards=(1.0,)):
    """A Batch body (schema Batch), trimmed to what the client reads."""
    n = len(rewards)
    return {"batch_id": batch_id, "status": status, "done": n if status == "done" else 0, "total": n,
            "rewards": list(rewards) if status == "done" else [None] * n, "valid": [True] * n}


def accepted(batch_id, total=1):
    """The 202 of POST /v1/rewards (schema BatchRef)."""
    return 202, {"batch_id": batch_id, "status": "running", "done": 0, "total": total,
                 "location": f"/v1/batches/{batch_id}"}


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        srv = self.server
        n = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(n)) if n else None
        t0 = time.monotonic()
        with srv.lock:
            calls = srv.arrivals[self.command]
            srv.arrivals[self.command] += 1
            srv.in_flight += 1
            srv.peak = max(srv.peak, srv.in_flight)
        try:
            out = srv.script(self.command, self.path, body, calls)
        finally:
            with srv.lock:
                srv.in_flight -= 1
                srv.log.append((self.command, self.path, body, time.monotonic() - t0))
                srv.keys.append(self.headers.get("Idempotency-Key"))
        self.close_connection = True
        if out is RESET:   # SO_LINGER 0: close sends a RST, as a crashing proxy would
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
            return
        status, payload, headers = (*out, {}) if len(out) == 2 else out
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.send_response(status)
        for k, v in {"Content-Type": "application/json", **headers, "Content-Length": str(len(data))}.items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST

    def log_message(self, *args):
        pass


@pytest.fixture
def scripted():
    """scripted(fn) serves fn(method, path, body, calls) -> (status, body[, headers]) or
    RESET, where calls counts requests of that method that arrived before; returns the
    server, whose .log holds (method, path, body, seconds the answer took)."""
    servers = []

    def start(script):
        srv = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        srv.daemon_threads = True
        srv.script, srv.log, srv.lock, srv.in_flight, srv.peak = script, [], threading.Lock(), 0, 0
        srv.arrivals, srv.keys = collections.Counter(), []   # keys: each logged request's Idempotency-Key
        srv.handle_error = lambda *a: None   # a RESET makes the handler's own cleanup fail
        srv.url = f"http://127.0.0.1:{srv.server_address[1]}"
        threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        servers.append(srv)
        return srv

    yield start
    for srv in servers:
        srv.shutdown()
        srv.server_close()


@pytest.fixture
def sleeps(monkeypatch):
    """Every pause the client takes, in seconds (it still sleeps them)."""
    seen, real = [], time.sleep
    monkeypatch.setattr(client_mod.time, "sleep", lambda s: (seen.append(s), real(s))[1])
    return seen


def test_unreachable_gateway_is_retried_with_growing_backoff_then_unavailable(sleeps):
    url = f"http://127.0.0.1:{free_port()}"     # nothing listens there
    c = Client(url, retries=4, backoff_s=0.1)
    t0 = time.monotonic()
    with pytest.raises(KernelgateUnavailable) as e:
        c.rewards(task_id="ci/1_add_relu", codes=["x"])
    elapsed = time.monotonic() - t0
    assert e.value.attempts == 5 and e.value.status is None and e.value.code == "unavailable"
    assert isinstance(e.value, KernelgateError)
    msg = str(e.value)
    assert url + "/v1/rewards" in msg and "5 attempts" in msg and "ConnectionRefusedError" in msg, msg
    # equal jitter: pause k is in [step/2, step], step = 0.1 * 2**k
    assert len(sleeps) == 4
    for k, s in enumerate(sleeps):
        assert 0.1 * 2 ** k / 2 <= s <= 0.1 * 2 ** k, sleeps
    assert 0.75 <= elapsed < 2.5


def test_retries_stop_at_the_overall_deadline():
    c = Client(f"http://127.0.0.1:{free_port()}", retries=1000, backoff_s=0.2, timeout_s=1.0)
    t0 = time.monotonic()
    with pytest.raises(KernelgateUnavailable) as e:
        c.rewards(task_id="ci/1_add_relu", codes=["x"])
    assert time.monotonic() - t0 < 1.5 and 2 <= e.value.attempts < 10


@pytest.mark.parametrize("status,code", [(503, "not_ready"), (429, "queue_full")])
def test_retry_after_is_waited_out_then_the_answer_comes(scripted, status, code):
    def script(method, path, body, calls):
        if calls < 2:
            return status, {"code": code, "message": "come back later"}, {"Retry-After": "1"}
        return 200, batch(rewards=(0.5,))

    srv = scripted(script)
    t0 = time.monotonic()
    resp = Client(srv.url, backoff_s=0.01).rewards(task_id="ci/1_add_relu", codes=["x"])
    elapsed = time.monotonic() - t0
    assert resp["rewards"] == [0.5]
    assert [r[0] for r in srv.log] == ["POST"] * 3
    assert 2.0 <= elapsed < 3.5, "two Retry-After: 1 pauses, not the 0.01 s backoff"


def test_a_retry_after_past_the_deadline_gives_up_at_once_with_the_gateway_code(scripted):
    srv = scripted(lambda *a: (429, {"code": "queue_full", "message": "full"}, {"Retry-After": "3600"}))
    t0 = time.monotonic()
    with pytest.raises(KernelgateUnavailable) as e:
        Client(srv.url, timeout_s=5).rewards(task_id="ci/1_add_relu", codes=["x"])
    assert time.monotonic() - t0 < 1.0
    assert (e.value.status, e.value.code, e.value.attempts) == (429, "queue_full", 1)


def test_a_slow_batch_comes_back_202_within_the_read_timeout_and_is_polled(scripted):
    def script(method, path, body, calls):
        if method == "POST":
            time.sleep(min(body["wait_s"], 2.0))   # as the gateway: wait up to wait_s, then 202
            return accepted("b_slow")
        assert path == "/v1/batches/b_slow"
        return 200, batch("b_slow", "running" if calls < 3 else "done", rewards=(1.0,))

    srv = scripted(script)
    c = Client(srv.url, read_timeout_s=1.0, poll_s=0.05)
    resp = c.rewards(task_id="ci/1_add_relu", codes=["x"], wait_s=600)
    assert resp["rewards"] == [1.0] and resp["batch_id"] == "b_slow"
    assert srv.log[0][2]["wait_s"] == 0.5, "wait_s is bounded by the read timeout less headroom"
    assert [r[0] for r in srv.log] == ["POST"] + ["GET"] * 4
    assert max(r[3] for r in srv.log) < 1.0, "no answer took as long as the client's read timeout"


def test_wait_s_default_and_per_call_override(scripted):
    srv = scripted(lambda *a: (200, batch()))
    c = Client(srv.url, read_timeout_s=30.0, wait_s=0)
    c.rewards(task_id="ci/1_add_relu", codes=["x"])
    c.rewards(task_id="ci/1_add_relu", codes=["x"], wait_s=7)
    Client(srv.url, read_timeout_s=30.0).rewards(task_id="ci/1_add_relu", codes=["x"])
    assert [r[2]["wait_s"] for r in srv.log] == [0, 7, 20.0]


def test_a_poll_cut_by_a_connection_reset_is_retried(scripted):
    def script(method, path, body, calls):
        if method == "POST":
            return accepted("b_reset")
        return RESET if calls == 0 else (200, batch("b_reset", rewards=(0.25,)))

    srv = scripted(script)
    resp = Client(srv.url, poll_s=0.01, backoff_s=0.01).rewards(task_id="ci/1_add_relu", codes=["x"])
    assert resp["rewards"] == [0.25]
    assert [r[0] for r in srv.log] == ["POST", "GET", "GET"]


def test_a_post_that_times_out_reading_is_sent_again_under_one_key(scripted):
    def script(method, path, body, calls):
        if method == "POST" and calls == 0:
            time.sleep(1.5)      # a wedged gateway: it holds the batch but does not answer
        return (200, batch("b_wedged", rewards=(0.5,))) if method == "POST" else (404, {})

    srv = scripted(script)
    c = Client(srv.url, read_timeout_s=0.5, backoff_s=0.01)
    assert c.rewards(task_id="ci/1_add_relu", codes=["x"])["rewards"] == [0.5]
    c.rewards(task_id="ci/1_add_relu", codes=["x"])
    time.sleep(1.2)              # the wedged first attempt logs last
    posts = [k for (m, *_), k in zip(srv.log, srv.keys) if m == "POST"]
    assert len(posts) == 3 and all(k and k.startswith("kgc-") for k in posts), posts
    # the resent POST carried the first one's key, the next call a new one
    assert sorted(collections.Counter(posts).values()) == [1, 2], posts


def test_a_request_still_being_queued_is_retried(scripted):
    def script(method, path, body, calls):
        if calls == 0:
            return 409, {"code": "request_in_progress", "message": "still queueing"}
        return 200, batch("b_inprog", rewards=(1.0,))

    srv = scripted(script)
    assert Client(srv.url, backoff_s=0.01).rewards(task_id="ci/1_add_relu", codes=["x"])["rewards"] == [1.0]
    assert srv.arrivals["POST"] == 2


def test_a_poll_that_times_out_reading_is_retried(scripted):
    def script(method, path, body, calls):
        if method == "POST":
            return accepted("b_slowpoll")
        if calls == 0:
            time.sleep(1.0)      # past the client's 0.5 s read timeout
        return 200, batch("b_slowpoll", rewards=(0.75,))

    srv = scripted(script)
    c = Client(srv.url, read_timeout_s=0.5, poll_s=0.01, backoff_s=0.01)
    assert c.rewards(task_id="ci/1_add_relu", codes=["x"])["rewards"] == [0.75]
    assert srv.arrivals["GET"] == 2


def test_a_poll_answered_404_raises_at_once_naming_the_batch(scripted):
    def script(method, path, body, calls):
        if method == "POST":
            return accepted("b_gone")
        return 404, {"code": "batch_not_found", "message": "no batch b_gone", "field": "id"}

    srv = scripted(script)
    with pytest.raises(KernelgateError) as e:
        Client(srv.url, poll_s=0.01, backoff_s=0.01).rewards(task_id="ci/1_add_relu", codes=["x"])
    assert (e.value.status, e.value.code, e.value.batch_id) == (404, "batch_not_found", "b_gone")
    assert srv.arrivals["GET"] == 1


def test_a_batch_past_timeout_s_raises_the_typed_timeout_with_its_id(scripted):
    def script(method, path, body, calls):
        if method == "POST":
            return accepted("b_never")
        # done at last, well past the deadline: a client that ignores it returns instead of raising
        return 200, batch("b_never", "running" if calls < 40 else "done")

    srv = scripted(script)
    t0 = time.monotonic()
    with pytest.raises(KernelgateTimeout) as e:
        Client(srv.url, timeout_s=1.0, poll_s=0.1).rewards(task_id="ci/1_add_relu", codes=["x"])
    assert 1.0 <= time.monotonic() - t0 < 2.0
    assert e.value.batch_id == "b_never" and e.value.code == "timeout" and "b_never" in str(e.value)
    assert isinstance(e.value, KernelgateError)


PROXY_502 = b"<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>"


@pytest.mark.parametrize("answer,error,status,code,requests", [
    ((502, PROXY_502, {"Content-Type": "text/html"}), KernelgateUnavailable, 502, "http_502", 3),
    ((400, b"no", {"Content-Type": "text/plain"}), KernelgateError, 400, "http_400", 1),
    ((200, b"<html>captive portal</html>", {"Content-Type": "text/html"}), KernelgateError, 200, "bad_response", 1),
    ((200, [1.0]), KernelgateError, 200, "bad_response", 1),
    ((200, {"status": "done"}), KernelgateError, 200, "bad_response", 1),
], ids=["proxy-502-html", "400-text", "200-html", "200-json-list", "200-no-rewards"])
def test_answers_that_are_not_the_api_raise_kernelgate_error(scripted, answer, error, status, code, requests):
    srv = scripted(lambda *a: answer)
    with pytest.raises(KernelgateError) as e:
        Client(srv.url, retries=2, backoff_s=0.01).rewards(task_id="ci/1_add_relu", codes=["x"])
    assert type(e.value) is error and (e.value.status, e.value.code) == (status, code), str(e.value)
    assert len(srv.log) == requests
    if status == 502:
        assert "Bad Gateway" in str(e.value) and "3 attempts" in str(e.value)


def slow_group_server(scripted, delay_s):
    """Answers each POST after delay_s, rewarding completion "3.5" with 3.5."""
    def script(method, path, body, calls):
        if body["task_id"] == "bad":
            return 400, {"code": "task_not_found", "message": "no task bad", "field": "task_id"}
        time.sleep(delay_s)
        return 200, batch(rewards=[float(c) for c in body["completions"]])
    return scripted(script)


def test_rewards_by_group_sends_groups_at_once_and_keeps_input_order(scripted):
    srv = slow_group_server(scripted, 0.5)
    completions = [str(i) for i in range(8)]
    groups = [(f"t{i % 4}", "binary", None) for i in range(8)]   # 4 groups, interleaved
    t0 = time.monotonic()
    rewards, valid = rewards_by_group(Client(srv.url), completions, groups)
    assert time.monotonic() - t0 < 1.5, "4 groups of 0.5 s each, one after the other, take 2 s"
    assert rewards == [float(i) for i in range(8)] and valid == [True] * 8
    assert len(srv.log) == 4 and srv.peak == 4
    assert sorted(r[2]["completions"] for r in srv.log) == [["0", "4"], ["1", "5"], ["2", "6"], ["3", "7"]]


def test_rewards_by_group_sends_each_completions_prompt_with_its_group(scripted):
    srv = slow_group_server(scripted, 0.0)
    completions = [str(i) for i in range(4)]
    prompts = [f"p{i}" for i in range(3)] + [[{"role": "user", "content": "p3"}]]
    rewards_by_group(Client(srv.url), completions, [(f"t{i % 2}", None, None) for i in range(4)], prompts=prompts)
    sent = sorted((r[2]["completions"], r[2]["prompts"]) for r in srv.log)
    assert sent == [(["0", "2"], ["p0", "p2"]), (["1", "3"], ["p1", [{"role": "user", "content": "p3"}]])], sent
    with pytest.raises(ValueError):
        rewards_by_group(Client(srv.url), completions, [("t0", None, None)] * 4, prompts=["one"])


def test_rewards_by_group_holds_to_max_workers(scripted):
    srv = slow_group_server(scripted, 0.5)
    t0 = time.monotonic()
    rewards_by_group(Client(srv.url), ["1"] * 4, [(f"t{i}", None, None) for i in range(4)], max_workers=2)
    assert time.monotonic() - t0 >= 1.0 and srv.peak == 2


def test_rewards_by_group_raises_the_first_failure_without_waiting_for_the_rest(scripted):
    srv = slow_group_server(scripted, 1.5)
    t0 = time.monotonic()
    with pytest.raises(KernelgateError) as e:
        rewards_by_group(Client(srv.url), ["1", "2", "3"], [("t0", None, None), ("bad", None, None), ("t1", None, None)])
    assert time.monotonic() - t0 < 1.0
    assert (e.value.status, e.value.code, e.value.field) == (400, "task_not_found", "task_id")
    assert "bad" in "".join(getattr(e.value, "__notes__", ["bad"]))


class Recording(Client):
    """A Client that notes what each HTTP request it made came to."""

    seen = None

    def _once(self, method, path, body, extra=None):
        self.seen = self.seen or []
        try:
            status, resp = super()._once(method, path, body, extra)
        except Exception:
            self.seen.append((method, "error"))
            raise
        self.seen.append((method, status))
        return status, resp


def test_live_gateway_started_late_rewards_an_honest_kernel_through_202_and_polling(tmp_path, monkeypatch):
    monkeypatch.setattr(client_mod, "BACKOFF_MAX_S", 1.0)   # no 6-12 s pause while serve starts
    s = Serve(tmp_path / "data", tmp_path)
    c = Recording(s.url, wait_s=0, poll_s=0.2, backoff_s=0.2, retries=1000, timeout_s=120)  # the deadline bounds it
    out = {}

    def call():
        try:
            out["resp"] = c.rewards(reference=ADD, reward_fn="binary",
                                    completions=[f"```python\n{ADD_OK}\n```", "no code here"])
        except Exception as e:  # the assertion below shows it
            out["err"] = e

    t = threading.Thread(target=call)
    t.start()                 # the trainer comes up first: refused until serve listens
    time.sleep(0.5)
    try:
        s.start()
        t.join(120)
    finally:
        assert s.stop() == 0, s.log()
    assert "err" not in out, out.get("err")
    assert out["resp"]["rewards"] == [1.0, 0.0]
    assert [v["status"] for v in out["resp"]["results"]] == ["correct", "invalid_submission"]
    assert c.seen[0] == ("POST", "error") and ("POST", 202) in c.seen and c.seen[-1] == ("GET", 200), c.seen
