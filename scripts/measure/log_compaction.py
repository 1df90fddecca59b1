"""What `kernelgate compact` does to a log written the way a trainer writes it: one
reward request every ~2.2 s (one sink batch each, so one part file each), then compact,
then the same rows read back. Prints files, bytes and rows before and after.

    python3 scripts/measure/log_compaction.py --requests 20   # bin/kernelgate built; KERNELGATE_PYTHON set
"""
import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pyarrow.dataset as ds

REPO = Path(__file__).resolve().parents[2]
BIN = REPO / "bin" / "kernelgate"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def post(url, body):
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=120) as r:
        return json.loads(r.read())


def files_and_bytes(root, table):
    parts = list((root / f"table={table}").glob("date=*/*.parquet"))
    return len(parts), sum(p.stat().st_size for p in parts)


def rows(root, table):
    t = ds.dataset(root / f"table={table}", format="parquet", partitioning="hive").to_table()
    return sorted(t.to_pylist(), key=lambda r: r["event_id"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=20)
    ap.add_argument("--items", type=int, default=8)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="kg-compact-"))
    port = free_port()
    srv = subprocess.Popen([str(BIN), "serve", "--addr", f"127.0.0.1:{port}", "--data", str(tmp / "data"),
                            "--compact-every", "0", "--open"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(300):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=1)
                break
            except OSError:
                time.sleep(0.2)
        task = (REPO / "datasets" / "ci" / "1_add_relu.py").read_text()
        for i in range(args.requests):
            post(f"http://127.0.0.1:{port}/v1/rewards", {"reference": task, "wait_s": 60,
                 "completions": [f"request {i}, item {j}: no code" for j in range(args.items)]})
            time.sleep(2.2)   # past the sink's 2 s batch wait: one part file per request
    finally:
        srv.send_signal(signal.SIGTERM)
        srv.wait(90)
    root = tmp / "data" / "parquet"
    before_rows = rows(root, "evaluations")
    nf0, nb0 = files_and_bytes(root, "evaluations")
    r = subprocess.run([str(BIN), "compact", "--all", "--data", str(tmp / "data")], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(r.stderr)
    nf1, nb1 = files_and_bytes(root, "evaluations")
    same = rows(root, "evaluations") == before_rows
    print(f"evaluations: {len(before_rows)} rows; {nf0} files, {nb0 / 1024:.1f} KiB -> {nf1} file(s), "
          f"{nb1 / 1024:.1f} KiB ({nb0 / max(nb1, 1):.1f}x smaller); rows identical: {same}")
    shutil.rmtree(tmp, ignore_errors=True)
    sys.exit(0 if same else 1)


if __name__ == "__main__":
    os.environ.setdefault("KERNELGATE_PYTHON", str(REPO / ".venv" / "bin" / "python"))
    main()
