"""The soak's load and its sampler, against a conftest.Serve that may restart under them.

Each load loop keeps one request in flight and pauses between requests; a loop that finds
the server down (a restart) backs off and tries again. Loops stop sending while `hold` is
set, so the test can drain the queue before it stops the server. Every reward or batch
item that got an accepted answer (200, or 202 with a batch id) goes into a ledger by its
evaluation id, which the Parquet log must then hold exactly once.
"""

import collections
import contextlib
import os
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

from conftest import REPO, free_port

CI = REPO / "datasets" / "ci"
SOLUTIONS = REPO / "datasets" / "solutions" / "ci"
HACKS = REPO / "harness" / "testdata" / "hacks"
TASKS = sorted(p.stem for p in CI.glob("*.py"))
# Kernels for ci/1_add_relu that must not be rewarded: a reward hack, a decoy, a wrong
# answer and one that does not compile, so the verdicts are mixed.
BAD = [(HACKS / "patch_allclose.py").read_text(), (HACKS / "decoy_dead_kernel.py").read_text(),
       (HACKS / "degenerate_zeros.py").read_text(), "def broken(:\n"]
EXPORT_FORMATS = ["sft", "dpo", "arrow", "trajectories"]


def solution(task):
    return (SOLUTIONS / f"{task}.py").read_text()


def eval_ids(batch_id, n):
    return [f"{batch_id}-{i:05d}" for i in range(n)]


class Load:
    """Mixed load on srv (a conftest.Serve whose proc changes across restarts)."""

    def __init__(self, srv):
        self.srv = srv
        self.stop, self.hold = threading.Event(), threading.Event()
        self.lock = threading.Lock()
        self.answers = collections.defaultdict(collections.Counter)   # kind -> status -> n
        self.accepted = {}                                             # batch_id -> items
        self.statuses = collections.Counter()                          # verdict status -> n
        self.busy = collections.Counter()                              # loop -> requests in flight
        self.threads = []
        self.recent = collections.deque(maxlen=8)

    # --- plumbing ---------------------------------------------------------------------------

    def call(self, kind, method, path, body=None, timeout_s=300):
        try:
            status, resp = self.srv.request(method, path, body, timeout_s=timeout_s)
        except OSError:
            status, resp = "conn_error", None
        with self.lock:
            self.answers[kind][status] += 1
        return status, resp

    def accept(self, status, resp, n):
        if status in (200, 202) and isinstance(resp, dict) and resp.get("batch_id"):
            with self.lock:
                self.accepted[resp["batch_id"]] = n
            self.recent.append(resp["batch_id"])
            for r in resp.get("results") or []:
                if r:
                    with self.lock:
                        self.statuses[r["status"]] += 1

    def accepted_ids(self):
        with self.lock:
            return {e for b, n in self.accepted.items() for e in eval_ids(b, n)}

    def loop(self, name, pause_s, fn):
        i = 0
        while not self.stop.is_set():
            if self.hold.is_set():
                self.stop.wait(0.2)
                continue
            with self.lock:
                self.busy[name] += 1
            try:
                ok = fn(i)
            finally:
                with self.lock:
                    self.busy[name] -= 1
            i += 1
            self.stop.wait(pause_s if ok is not False else max(pause_s, 1.0))

    def start(self, loops):
        for name, pause_s in loops:
            t = threading.Thread(target=self.loop, args=(name, pause_s, getattr(self, name)), daemon=True)
            t.start()
            self.threads.append(t)

    def pause(self, timeout_s=330):
        """Hold the loops and wait until none has a request in flight."""
        self.hold.set()
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with self.lock:
                if not any(self.busy.values()):
                    return
            time.sleep(0.2)
        raise AssertionError(f"load did not pause within {timeout_s} s: {dict(self.busy)}")

    def finish(self):
        self.stop.set()
        for t in self.threads:
            t.join(330)

    # --- the loops: each returns False when the server did not answer -----------------------

    def rewards(self, i):
        """A synchronous batch: a correct kernel (new or seen before, so the cache answers
        some) and one that must not be rewarded."""
        task = TASKS[i % len(TASKS)]
        tag = f"\n# soak reward {i}\n" if i % 3 else "\n# soak reward again\n"
        codes = [solution(task) + tag]
        if task == "1_add_relu":
            codes.append(BAD[(i // len(TASKS)) % len(BAD)])
        status, resp = self.call("rewards", "POST", "/v1/rewards",
                                 {"task_id": f"ci/{task}", "codes": codes, "wait_s": 300})
        self.accept(status, resp, len(codes))
        return status != "conn_error"

    def batches(self, i):
        """An asynchronous batch (202), then its results polled until done. Its third
        kernel was written for another task: wrong for this one."""
        codes = [solution("1_add_relu") + f"\n# soak batch {i}\n", BAD[i % len(BAD)],
                 solution("7_gelu") + f"\n# soak batch {i}\n"]
        status, resp = self.call("batches", "POST", "/v1/rewards",
                                 {"task_id": "ci/1_add_relu", "codes": codes, "wait_s": 0})
        if status != 202:
            return status != "conn_error"
        self.accept(status, {"batch_id": resp["batch_id"]}, len(codes))
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not self.stop.is_set():
            status, got = self.call("batches", "GET", f"/v1/batches/{resp['batch_id']}", timeout_s=60)
            if status == 200 and got.get("status") == "done":
                with self.lock:
                    self.statuses.update(r["status"] for r in got["results"] if r)
                return True
            if status not in (200, "conn_error", 503):
                return True
            time.sleep(0.5)
        return True

    def searches(self, i):
        """A short search with the scripted LLM, followed to its end."""
        status, ref = self.call("searches", "POST", "/v1/searches",
                                {"task_id": "ci/1_add_relu", "steps": 3, "policy": "sample"})
        if status != 202:
            return status != "conn_error"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not self.stop.is_set():
            status, st = self.call("searches", "GET", f"/v1/searches/{ref['search_id']}", timeout_s=60)
            if status == 200 and st.get("state") != "running":
                return True
            time.sleep(1)
        return True

    def exports(self, i):
        """An export of the log, and one of its files downloaded."""
        fmt = EXPORT_FORMATS[i % len(EXPORT_FORMATS)]
        status, m = self.call("exports", "POST", "/v1/exports", {"format": fmt}, timeout_s=120)
        if status == 201 and m.get("files"):
            name = sorted(m["files"])[0]
            self.call("exports", "GET", f"/v1/exports/{m['export_id']}/files/{name}", timeout_s=120)
        return status != "conn_error"

    def reads(self, i):
        paths = ["/readyz", "/v1/tasks?limit=5", "/healthz"]
        if self.recent:
            paths.append(f"/v1/batches/{self.recent[-1]}")
        status, _ = self.call("reads", "GET", paths[i % len(paths)], timeout_s=60)
        return status != "conn_error"


@contextlib.contextmanager
def scripted_llm():
    """scripts/scripted_llm.py on a free port, answering every prompt with 1_add_relu's
    solution; yields its base URL."""
    port = free_port()
    p = subprocess.Popen([sys.executable, str(REPO / "scripts" / "scripted_llm.py"), "--port", str(port),
                          "--kernel", str(SOLUTIONS / "1_add_relu.py")], stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=1)
            except urllib.error.HTTPError:
                break                      # it answers (501 to a GET): it listens
            except OSError:
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        p.kill()
        p.wait()


def tree_bytes(path):
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            try:
                total += os.lstat(os.path.join(root, f)).st_size
            except OSError:
                pass
    return total


def proc_figures(pid):
    """(RSS in MiB, open files) of a live process, or (None, None)."""
    try:
        rss = next(int(line.split()[1]) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
                   if line.startswith("VmRSS:")) / 1024
        return rss, len(os.listdir(f"/proc/{pid}/fd"))
    except (OSError, StopIteration, ValueError):
        return None, None


def goroutines(srv):
    try:
        status, text = srv.get("/metrics", timeout_s=10)
    except OSError:
        return None
    if status != 200:
        return None
    for line in text.decode().splitlines():
        if line.startswith("go_goroutines "):
            return float(line.split()[1])
    return None


class Sampler:
    """Samples the live server every every_s seconds while `up` is set; `life` numbers the
    server lifetimes (set by whoever restarts it)."""

    def __init__(self, srv, every_s):
        self.srv, self.every_s = srv, every_s
        self.samples, self.life, self.t0 = [], 0, time.monotonic()
        self.up, self.stop = threading.Event(), threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self):
        while not self.stop.is_set():
            if self.up.is_set():
                self.sample()
            self.stop.wait(self.every_s)

    def sample(self):
        proc, life = self.srv.proc, self.life
        rss, fds = proc_figures(proc.pid)
        g = goroutines(self.srv)
        if rss is None or not self.up.is_set() or self.life != life:
            return
        self.samples.append({"t_s": round(time.monotonic() - self.t0, 2), "life": life, "rss_mib": round(rss, 1),
                             "goroutines": g, "open_fds": fds,
                             "store_mib": round(tree_bytes(self.srv.data / "nats") / 2**20, 2),
                             "parquet_mib": round(tree_bytes(self.srv.data / "parquet") / 2**20, 2)})
