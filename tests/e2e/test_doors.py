"""Who gets into a real `kernelgate serve`: open mode only when chosen,
an empty key file lets nobody in, a foreign Host or Origin is 403 on loopback, bodies
must be JSON, failed authentication is limited without locking valid keys out, duplicate JSON keys and
repeated query parameters are 400, and exports have a per-key quota."""

import json
import subprocess
import urllib.error
import urllib.request

from conftest import BIN, Serve


def keys(data, *args):
    r = subprocess.run([str(BIN), "keys", *args, "--data", str(data)], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def test_without_open_or_keys_nobody_gets_in_and_web_pages_are_refused(tmp_path):
    s = Serve(tmp_path / "data", tmp_path, open=False).start()   # /readyz needs no key
    try:
        status, err = s.get("/v1/tasks")
        assert status == 401 and err["code"] == "unauthorized", err
        assert "kernelgate keys create" in err["message"] and "--open" in err["message"], err
        assert s.get("/healthz")[0] == 200 and s.get("/openapi.json")[0] == 200
        # DNS rebinding and cross-site requests: refused before any key is asked for.
        for headers, what in [({"Host": f"evil.example:{s.port}"}, "Host"),
                              ({"Origin": "https://evil.example"}, "Origin"),
                              ({"Origin": "null"}, "Origin")]:
            status, err = s.get("/v1/tasks", headers=headers)
            assert status == 403 and err["code"] == "forbidden" and what in err["message"], (headers, err)
        status, err = s.get("/healthz", headers={"Host": "evil.example"})
        assert status == 403, err
        assert s.get("/healthz", headers={"Host": f"localhost:{s.port}", "Origin": "http://127.0.0.1:3000"})[0] == 200
    finally:
        assert s.stop() == 0, s.log()
    # --open is for loopback only.
    r = subprocess.run([str(BIN), "serve", "--addr", "0.0.0.0:0", "--open", "--data", str(tmp_path / "d2")],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "only a loopback --addr" in r.stderr, r.stderr


def test_open_mode_until_a_key_exists_then_the_last_revoke_locks_everyone_out(tmp_path):
    s = Serve(tmp_path / "data", tmp_path, args=["--auth-fail-limit", "4", "--exports-per-hour", "1"]).start()
    try:
        assert s.get("/v1/tasks?limit=1")[0] == 200                 # --open, no keys.json
        # Bodies must be declared JSON; a form-typed body never reaches a handler.
        status, err = s.post("/v1/rewards", {"task_id": "ci/1_add_relu", "codes": ["x"]},
                             headers={"Content-Type": "text/plain"})
        assert status == 415 and err["code"] == "unsupported_media_type", err
        # Input two readers could read two ways is refused.
        raw = b'{"task_id": "ci/1_add_relu", "task_id": "ci/7_gelu", "code": "x"}'
        status, err = post_raw(s, "/v1/evaluations", raw)
        assert status == 400 and err["code"] == "bad_json" and err["field"] == "task_id", err
        status, err = s.get("/v1/tasks?limit=1&limit=2")
        assert status == 400 and err["field"] == "limit", err
        # One export per hour per caller: the second is 429 with Retry-After.
        first = s.post("/v1/exports", {"format": "sft"})
        assert first[0] in (201, 404), first
        status, err = s.post("/v1/exports", {"format": "sft"})
        assert status == 429 and err["code"] == "quota_exceeded", err
        assert int(s.last_headers["Retry-After"]) >= 1

        key = keys(s.data, "create", "--scopes", "reward", "--name", "trainer")
        status, err = s.get("/v1/tasks?limit=1")                    # failure 1
        assert status == 401, err
        assert s.get("/v1/tasks?limit=1", key=key)[0] == 200
        keys(s.data, "revoke", "trainer")
        status, err = s.get("/v1/tasks?limit=1", key=key)           # failure 2
        assert status == 401, err
        status, err = s.get("/v1/tasks?limit=1")                    # failure 3: not open again
        assert status == 401 and "revoked" in err["message"], err
        assert s.get("/healthz")[0] == 200
        # Failed authentication per address: the 5th failure past 4 is 429 ...
        status, err = s.get("/v1/tasks", key="kg_" + "a" * 52)       # failure 4
        assert status == 401, err
        status, err = s.get("/v1/tasks", key="kg_" + "b" * 52)
        assert status == 429 and err["code"] == "rate_limited", err
        assert 1 <= int(s.last_headers["Retry-After"]) <= 60
        # ... and a valid key from the same address still gets in.
        key = keys(s.data, "create", "--scopes", "reward", "--name", "trainer2")
        assert s.get("/v1/tasks?limit=1", key=key)[0] == 200
    finally:
        assert s.stop() == 0, s.log()


def post_raw(s, path, raw):
    """POSTs raw bytes as JSON (a body json.dumps could not make)."""
    req = urllib.request.Request(s.url + path, data=raw, method="POST", headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())
