"""Damaged data under `kernelgate serve`: one corrupt Parquet part, one
corrupt block of the batches bucket, one unreadable stream metadata file. A bad Parquet
file is moved aside (log line, metric) and exports and the sink go on; a damaged block
is copied aside and salvaged at start, and no request hangs; a stream that cannot be loaded stops serve with
the store's name and the fix; `kernelgate doctor --data` finds each offline."""

import glob
import hashlib
import os
import shutil
import subprocess
import time

import pyarrow.dataset as ds
import pytest

from conftest import BIN, REPO, Serve

TASK = (REPO / "datasets" / "ci" / "1_add_relu.py").read_text()
KERNEL = (REPO / "datasets" / "solutions" / "ci" / "1_add_relu.py").read_text()
STREAMS = "nats/jetstream/$G/streams"


def serve_on(data, log_dir):
    return Serve(data, log_dir, args=["--open", "--compact-every", "0"])


@pytest.fixture(scope="module")
def logged(tmp_path_factory):
    """A stopped server's data directory: four batches, each logged in its own part."""
    tmp = tmp_path_factory.mktemp("corrupt")
    srv = serve_on(tmp / "data", tmp).start()
    ids = []
    try:
        for i in range(4):
            status, resp = srv.post("/v1/rewards", {"reference": TASK, "codes": [KERNEL + f"\n# {i}\n"],
                                                    "wait_s": 300})
            assert status == 200, resp
            ids.append(resp["batch_id"])
            time.sleep(2.5)            # past the sink's batch wait: one part per batch
    finally:
        assert srv.stop() == 0, srv.log()
    return tmp / "data", ids


def copy(data, tmp_path):
    dst = tmp_path / "data"
    shutil.copytree(data, dst)
    return dst


def smash(path, offset, n=64):
    with open(path, "r+b") as f:
        f.seek(offset)
        f.write(b"\xff" * n)


def doctor(data):
    return subprocess.run([str(BIN), "doctor", "--data", str(data)], capture_output=True, text=True, timeout=120)


def eval_parts(data):
    return sorted(glob.glob(str(data / "parquet" / "table=evaluations" / "date=*" / "part-*.parquet")))


def metric(srv, name):
    text = srv.get("/metrics")[1].decode()
    return [line for line in text.splitlines() if line.startswith(name)]


def test_corrupt_parquet_is_quarantined_and_the_log_goes_on(logged, tmp_path):
    data = copy(logged[0], tmp_path)
    parts = eval_parts(data)
    assert len(parts) >= 2, parts
    bad = parts[0]
    smash(bad, os.path.getsize(bad) - 8, 4)           # the footer's length: not Parquet any more

    r = doctor(data)
    assert r.returncode != 0 and os.path.basename(bad) in r.stdout and "corrupt" in r.stdout, r.stdout + r.stderr

    srv = serve_on(data, tmp_path).start()
    try:
        status, m = srv.post("/v1/exports", {"format": "sft"})
        assert status == 201, m
        rel = os.path.relpath(bad, data / "parquet")
        assert not os.path.exists(bad)
        assert (data / "parquet" / ".quarantine" / rel).exists(), sorted(glob.glob(str(data / "parquet" / "**"), recursive=True))
        assert metric(srv, "kernelgate_parquet_quarantined_files") == ["kernelgate_parquet_quarantined_files 1"]
        assert "moved aside" in srv.log(), srv.log()

        # The sink goes on: a new batch is logged beside the good parts.
        status, resp = srv.post("/v1/rewards", {"reference": TASK, "codes": [KERNEL + "\n# after\n"], "wait_s": 300})
        assert status == 200, resp
        new_id = f"{resp['batch_id']}-00000"
    finally:
        assert srv.stop() == 0, srv.log()
    rows = ds.dataset(data / "parquet" / "table=evaluations", format="parquet",
                      partitioning="hive").to_table(columns=["eval_id"]).column("eval_id").to_pylist()
    assert new_id in rows and len(rows) == len(logged[1]), rows   # 4 - 1 quarantined + 1 new

    r = doctor(data)
    assert r.returncode == 0, r.stdout + r.stderr


def tree_sums(root):
    out = {}
    for dirpath, _, files in os.walk(root):
        for f in files:
            p = os.path.join(dirpath, f)
            with open(p, "rb") as fh:
                out[p] = hashlib.sha256(fh.read()).hexdigest()
    return out


def test_corrupt_kv_block_is_salvaged_and_no_request_hangs(logged, tmp_path):
    data, ids = copy(logged[0], tmp_path), logged[1]
    blocks = sorted(glob.glob(str(data / STREAMS / "KV_batches" / "msgs" / "*.blk")))
    assert blocks, "no batches block"
    smash(blocks[0], os.path.getsize(blocks[0]) // 2)

    before = tree_sums(data)
    r = doctor(data)                                  # a check without --fix changes nothing
    assert r.returncode != 0 and "KV_batches" in r.stdout and "DAMAGED" in r.stdout, r.stdout + r.stderr
    assert "would be put back" in r.stdout, r.stdout
    assert tree_sums(data) == before, "doctor without --fix changed the data directory"

    srv = serve_on(data, tmp_path).start()
    try:
        answers = []
        for b in ids:
            t0 = time.monotonic()
            status, body = srv.get(f"/v1/batches/{b}", timeout_s=60)
            answers.append((b, status, round(time.monotonic() - t0, 1)))
        assert all(s in (200, 404) for _, s, _ in answers), answers
        assert all(dt < 20 for _, _, dt in answers), f"a read waited past its bound: {answers}"
        log = srv.log()
        assert "damaged blocks" in log and "KV_batches" in log, log
        assert "salvaged a damaged stream" in log, log
        assert glob.glob(str(data / "nats" / ".damaged" / "*" / "KV_batches" / "msgs" / "*.blk")), "no copy set aside"
        assert any('store="KV_batches"' in line for line in metric(srv, "kernelgate_store_damage")), metric(srv, "kernelgate_store")
        lost = [line for line in metric(srv, "kernelgate_store_salvage_records")
                if 'stream="KV_batches"' in line and 'outcome="lost"' in line]
        assert lost and float(lost[0].split()[-1]) >= 1, metric(srv, "kernelgate_store_salvage")

        status, resp = srv.post("/v1/rewards", {"reference": TASK, "codes": [KERNEL + "\n# after\n"], "wait_s": 300})
        assert status == 200, resp
        assert srv.get(f"/v1/batches/{resp['batch_id']}")[0] == 200
    finally:
        assert srv.stop() == 0, srv.log()


def test_unloadable_stream_stops_serve_with_the_fix(logged, tmp_path):
    data = copy(logged[0], tmp_path)
    meta = data / STREAMS / "KV_batches" / "meta.inf"
    smash(meta, 0, 16)

    env = {**os.environ, "KERNELGATE_CONCURRENCY": "1"}
    p = subprocess.run([str(BIN), "serve", "--open", "--addr", "127.0.0.1:0", "--data", str(data)],
                       capture_output=True, text=True, timeout=120, env=env)
    out = p.stdout + p.stderr
    assert p.returncode != 0, out
    assert "KV_batches" in out and "move it aside" in out, out

    # The fix it names works: the stream moved aside, serve starts (its results are gone).
    shutil.move(str(data / STREAMS / "KV_batches"), str(tmp_path / "KV_batches.damaged"))
    srv = serve_on(data, tmp_path).start()
    try:
        status, resp = srv.post("/v1/rewards", {"reference": TASK, "codes": [KERNEL + "\n# after\n"], "wait_s": 300})
        assert status == 200, resp
    finally:
        assert srv.stop() == 0, srv.log()
