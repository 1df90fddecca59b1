"""A real `kernelgate serve` (CPU mode) for end-to-end tests over HTTP.

The binary is bin/kernelgate (`make test` builds it first); the evaluator is the
interpreter in KERNELGATE_PYTHON (the Makefile exports the project venv's).
"""

import json
import os
import random
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BIN = REPO / "bin" / "kernelgate"


def logged_rows(data, table, columns):
    """The rows of one Parquet table the sink has published so far, [] before its first part.

    A partition directory can exist holding only the sink's hidden temp file; pyarrow then
    finds no fragment and no schema, so a poll must not ask it for columns yet."""
    import pyarrow.dataset as ds

    root = Path(data) / "parquet" / f"table={table}"
    if not any(root.rglob("part-*.parquet")):
        return []
    return ds.dataset(root, format="parquet", partitioning="hive").to_table(columns=columns).to_pylist()


def _ephemeral_low():
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


_ports = random.Random()
_given = set()


def free_port():
    """A free port below the kernel's ephemeral range. bind(0) and every outgoing connection
    (the other xdist workers' servers and polls) take theirs from that range, so a port
    from bind(0) can be taken again before the server under test binds it; a NATS node
    that could not bind exited so and failed one CI run. Nothing hands these out, and this
    process never gives one twice."""
    low = max(_ephemeral_low(), 11000)
    while True:
        port = _ports.randrange(10000, low)
        if port in _given:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        _given.add(port)
        return port


class Serve:
    """One `kernelgate serve` process over a data directory that outlives restarts.

    On loopback it runs with --open (callers without a key get in while the data
    directory has no keys.json; once a test creates a key, keys are required all the
    same); open=False leaves it out, as a user who chose no open mode would."""

    def __init__(self, data, log_dir, port=None, env=None, args=(), host="127.0.0.1", open=True):
        self.data, self.log_dir = Path(data), Path(log_dir)
        self.port = port or free_port()
        self.host, self.args = host, list(args)
        if open and host in ("127.0.0.1", "localhost", "::1"):
            self.args.append("--open")
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {**os.environ, "KERNELGATE_CONCURRENCY": "2", **(env or {})}
        self.proc, self.starts = None, 0

    def start(self, timeout_s=120, ready_path="/readyz"):
        if not BIN.exists():
            pytest.fail(f"{BIN} missing: run `make build` (make test does)")
        self.starts += 1
        log = open(self.log_dir / f"serve-{self.starts}.log", "wb")
        self.proc = subprocess.Popen(
            [str(BIN), "serve", "--addr", f"{self.host}:{self.port}", "--data", str(self.data), *self.args],
            env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                pytest.fail(f"serve exited {self.proc.returncode} before ready:\n{self.log()}")
            try:
                if self.get(ready_path)[0] == 200:
                    return self
            except OSError:
                pass
            time.sleep(0.2)
        pytest.fail(f"serve not ready after {timeout_s} s:\n{self.log()}")

    def log(self):
        return (self.log_dir / f"serve-{self.starts}.log").read_text(errors="replace")[-3000:]

    def kill9(self):
        """SIGKILL the server process alone, as a crash would; its zygote must notice."""
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()
        # The zygote and its children lose their parent's pipes and exit; make sure.
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def stop(self, timeout_s=90):
        """SIGTERM and wait for a clean exit; returns the exit code."""
        if self.proc is None or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else None
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            pytest.fail(f"serve did not stop within {timeout_s} s:\n{self.log()}")

    def request(self, method, path, body=None, timeout_s=300, headers=None, key=None):
        if key:
            headers = dict(headers or {}, Authorization=f"Bearer {key}")
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url + path, data=data, method=method,
                                     headers={"Content-Type": "application/json", **(headers or {})})
        try:
            with urllib.request.urlopen(req, timeout=timeout_s) as r:
                raw = r.read()
                self.last_headers = r.headers
                return r.status, (json.loads(raw) if raw and r.headers.get_content_type() == "application/json" else raw)
        except urllib.error.HTTPError as e:
            raw = e.read()
            self.last_headers = e.headers
            try:
                return e.code, json.loads(raw)
            except ValueError:
                return e.code, raw

    def get(self, path, **kw):
        return self.request("GET", path, **kw)

    def post(self, path, body, **kw):
        return self.request("POST", path, body, **kw)


@pytest.fixture
def serve(tmp_path):
    s = Serve(tmp_path / "data", tmp_path)
    yield s
    if s.proc is not None and s.proc.poll() is None:
        s.stop()
