"""A full disk under `kernelgate serve`: the data directory is a 20 MiB tmpfs
that a filler file fills to the last byte while batches run. The gateway must say so on
/readyz (503, naming the data directory), refuse new work with 507 or 503 and Retry-After
(never 500), keep every batch it accepted (none stays `running`), and take work again by
itself once the filler is gone."""

import errno
import os
import subprocess
import threading
import time

import pytest

from conftest import REPO, Serve

TASK = (REPO / "datasets" / "ci" / "1_add_relu.py").read_text()
KERNEL = (REPO / "datasets" / "solutions" / "ci" / "1_add_relu.py").read_text()


@pytest.fixture
def small_data(tmp_path):
    """A 20 MiB tmpfs as the data directory. CI runs as root in a container that may
    mount; where it may not, this fails rather than testing nothing."""
    data = tmp_path / "data"
    data.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=20m", "tmpfs", str(data)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        pytest.fail(f"cannot mount a 20 MiB tmpfs for the data directory (needs root and "
                    f"CAP_SYS_ADMIN): {r.stderr.strip()}")
    yield data
    subprocess.run(["umount", "-l", str(data)], check=False)


def fill(path):
    """Write zeros to path until the file system refuses; returns the bytes written."""
    n, chunk = 0, b"\0" * (256 << 10)
    with open(path, "wb", buffering=0) as f:
        while True:
            try:
                n += f.write(chunk)
            except OSError as e:
                if e.errno != errno.ENOSPC:
                    raise
                if len(chunk) == 1:
                    break
                chunk = chunk[: len(chunk) // 2]
        try:
            os.fsync(f.fileno())
        except OSError:
            pass
    return n


def reward(serve, tag, wait_s, items=2):
    body = {"reference": TASK, "codes": [KERNEL + f"\n# {tag} item {j}\n" for j in range(items)], "wait_s": wait_s}
    return serve.post("/v1/rewards", body, timeout_s=120)


def test_disk_full_refuses_then_recovers_losing_no_batch(small_data, tmp_path):
    serve = Serve(small_data, tmp_path, args=["--open", "--min-free", "4MiB", "--compact-every", "0"])
    serve.start()
    try:
        status, resp = reward(serve, "warm-up", 300)
        assert status == 200, resp

        # Batches accepted just before the disk fills: their jobs run while it is full.
        accepted = []
        for i in range(3):
            status, resp = reward(serve, f"before-{i}", 0)
            assert status == 202, resp
            accepted.append(resp["batch_id"])

        filler = small_data / "filler"
        written = fill(filler)
        assert written > 0

        statuses, lock, stop = [], threading.Lock(), threading.Event()

        def hammer(k):
            i = 0
            while not stop.is_set():
                try:
                    status, resp = reward(serve, f"full-{k}-{i}", 5)
                except OSError as e:          # a cut connection would be a bug too
                    status, resp = -1, str(e)
                with lock:
                    statuses.append((status, resp, dict(serve.last_headers or {}) if status > 0 else {}))
                    if status in (200, 202):
                        accepted.append(resp["batch_id"])
                i += 1
                time.sleep(0.2)

        threads = [threading.Thread(target=hammer, args=(k,)) for k in range(2)]
        for t in threads:
            t.start()

        # /readyz turns 503 and says why.
        deadline, ready = time.monotonic() + 30, None
        while time.monotonic() < deadline:
            ready = serve.get("/readyz")
            if ready[0] == 503:
                break
            time.sleep(0.2)
        assert ready[0] == 503, f"/readyz still {ready} with the data directory full:\n{serve.log()}"
        assert "data directory" in ready[1]["message"] or "store" in ready[1]["message"], ready
        time.sleep(5)                         # requests keep coming while it is full
        status, resp = reward(serve, "while-full", 5)
        assert status in (503, 507), (status, resp)
        assert int(serve.last_headers["Retry-After"]) > 0

        os.remove(filler)                     # space returns
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and serve.get("/readyz")[0] != 200:
            time.sleep(0.5)
        assert serve.get("/readyz")[0] == 200, f"not ready again after space returned:\n{serve.log()}"
        stop.set()
        for t in threads:
            t.join(150)

        status, resp = reward(serve, "after", 300)
        assert status == 200, resp

        bad = [(s, r) for s, r, _ in statuses if s not in (200, 202, 503, 507)]
        assert not bad, f"answers other than 200/202/503/507 while the disk was full: {bad[:3]}"
        refused = [(s, h) for s, _, h in statuses if s in (503, 507)]
        assert refused, "no request was refused while the disk was full"
        assert all(int(h.get("Retry-After", 0)) > 0 for _, h in refused), refused[:3]

        # Every accepted batch finishes: no job was dropped while the disk was full.
        deadline, running = time.monotonic() + 240, accepted
        while time.monotonic() < deadline and running:
            running = [b for b in running if serve.get(f"/v1/batches/{b}")[1]["status"] != "done"]
            time.sleep(1)
        assert not running, f"batches still running after space returned: {running}\n{serve.log()}"

        metrics = serve.get("/metrics")[1].decode()
        fives = [l for l in metrics.splitlines() if l.startswith("kernelgate_http_requests_total") and 'code="500"' in l]
        assert not fives, fives
    finally:
        serve.stop()
