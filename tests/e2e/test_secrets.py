"""No secret of the gateway's, the worker's or the host's reaches task or candidate code.

A canary is put where secrets live: in `kernelgate serve`'s and a remote `kernelgate
worker`'s environment (an LLM key, a NATS token, a token-looking KERNELGATE_ variable the
harness never reads, a name of its own), on their command lines, and around `kernelgate
eval`. A candidate and an inline reference then hunt for it (their environment, every
/proc/PID/cmdline and environ) and raise with what they found. The canary must appear in
no verdict, no file under the data directory (raw bytes, and every Parquet table decoded:
its pages are compressed) and no export, and not in eval's output.
"""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq

from conftest import BIN, REPO, Serve, free_port, logged_rows
from test_remote_workers import start_worker, stop, wait_ready

TASK = (REPO / "datasets" / "ci" / "1_add_relu.py").read_text()
KERNEL = (REPO / "datasets" / "solutions" / "ci" / "1_add_relu.py").read_text()
TAG = os.urandom(8).hex()
CANARY = f"kgcanary-{TAG}"

HUNT = '''

def kg_hunt():
    import json, os, re
    found = [k + "=" + v for k, v in os.environ.items() if re.search("(?i)canary", k + v)]
    for pid in os.listdir("/proc"):
        for name in ("cmdline", "environ"):
            try:
                with open("/proc/%s/%s" % (pid, name), "rb") as f:
                    found += re.findall("(?i)[^\\\\x00]*canary[^\\\\x00]*", f.read().decode("latin-1"))
            except OSError:
                pass
    return "HUNT " + json.dumps(sorted(set(found)))
'''
HUNTING_KERNEL = KERNEL.replace("x = x.contiguous()", "raise RuntimeError(kg_hunt())", 1) + HUNT
HUNTING_TASK = TASK.replace("return torch.relu(x + y)", "raise RuntimeError(kg_hunt())", 1) + HUNT
assert "kg_hunt()" in HUNTING_KERNEL.split("def kg_hunt")[0] and "kg_hunt()" in HUNTING_TASK.split("def kg_hunt")[0]


def secret_env(**more):
    return {"KG_CANARY_SECRET": CANARY, "OPENAI_API_KEY": f"sk-{CANARY}",
            "KERNELGATE_SESSION_TOKEN": f"tok-{CANARY}", "AWS_SECRET_ACCESS_KEY": CANARY,
            "KERNELGATE_CONCURRENCY": "2", **more}


def hunt(srv):
    """A hunting candidate (beside an honest one) and a hunting inline reference."""
    status, cand = srv.post("/v1/rewards", {"reference": TASK, "codes": [HUNTING_KERNEL, KERNEL], "wait_s": 300})
    assert status == 200, cand
    assert [r["status"] for r in cand["results"]] == ["runtime_error", "correct"], cand
    assert "HUNT [" in cand["results"][0]["feedback"], cand       # the hunt ran, and said what it found
    status, ref = srv.post("/v1/rewards", {"reference": HUNTING_TASK, "codes": [KERNEL], "wait_s": 300})
    assert status == 200, ref
    assert ref["valid"] == [False] and "HUNT" in json.dumps(ref), ref
    for resp in (cand, ref):
        assert TAG not in json.dumps(resp), resp
    return [cand["batch_id"], ref["batch_id"]]


def check_data_dir(data, batches, own_args):
    """No canary in any file's bytes, nor in any Parquet table decoded; the hunts' rows and
    an export of them are there (so the search is not vacuous). The data lock holds serve's
    own command line by design (bus/datalock.go): there the canary may appear, in the
    arguments serve was given (own_args) and nowhere else."""
    lock = Path(data) / "kernelgate.lock"
    text = lock.read_text()
    assert all(a in text for a in own_args), text
    for a in own_args:
        text = text.replace(a, "")
    assert TAG not in text, text
    files = [p for p in Path(data).rglob("*") if p.is_file() and p != lock]
    leaked = [str(p) for p in files if TAG.encode() in p.read_bytes()]
    assert not leaked, leaked
    tables = {p.parent.parent.name for p in Path(data, "parquet").rglob("part-*.parquet")}
    assert "table=evaluations" in {f"table={t.split('=', 1)[1]}" for t in tables}, tables
    for part in Path(data, "parquet").rglob("part-*.parquet"):
        rows = pq.read_table(part).to_pylist()
        assert TAG not in json.dumps(rows, default=str), part
    rows = logged_rows(data, "evaluations", ["batch_id", "feedback", "task_error"])
    ours = [r for r in rows if r["batch_id"] in batches]
    assert len(ours) == 3 and sum("HUNT" in (r["feedback"] or "") + (r["task_error"] or "") for r in ours) == 2, ours


def export_and_check(srv, batches):
    """An export of the log, once the sink has written the hunts' rows."""
    deadline = time.monotonic() + 120
    while len([r for r in logged_rows(srv.data, "evaluations", ["batch_id"]) if r["batch_id"] in batches]) < 3:
        assert time.monotonic() < deadline, "the hunts' rows were never logged"
        time.sleep(0.5)
    status, m = srv.post("/v1/exports", {"format": "arrow"})
    assert status == 201, m
    out = Path(srv.data) / "exports" / m["export_id"]
    raw = b"".join(p.read_bytes() for p in out.rglob("*") if p.is_file())
    assert b"HUNT" in raw and TAG.encode() not in raw


def test_a_gateways_secrets_never_reach_task_or_candidate_code(tmp_path):
    # The canary on serve's command line too: the name of the variable holding its LLM key.
    args = ["--llm-key-env", f"KGCANARY_{TAG}_KEY"]
    srv = Serve(tmp_path / "data", tmp_path, env=secret_env(), args=list(args))
    srv.start()
    try:
        batches = hunt(srv)
        export_and_check(srv, batches)
    finally:
        assert srv.stop() == 0, srv.log()
    check_data_dir(srv.data, batches, [" ".join(args)])


def test_a_remote_workers_secrets_never_reach_task_or_candidate_code(tmp_path):
    port = free_port()
    token_dir = tmp_path / CANARY          # on both command lines, as --nats-token-file
    token_dir.mkdir()
    token = token_dir / "token"
    token.write_text(f"nats-{CANARY}\n")
    srv = Serve(tmp_path / "data", tmp_path, env=secret_env(),
                args=["--nats-listen", f"127.0.0.1:{port}", "--workers", "0", "--nats-token-file", str(token)])
    srv.start(ready_path="/healthz")
    worker = start_worker(tmp_path, f"nats://127.0.0.1:{port}", "worker",
                          env=secret_env(KERNELGATE_API_KEY=f"kg-{CANARY}"), extra=["--nats-token-file", str(token)])
    try:
        wait_ready(srv)
        batches = hunt(srv)
        export_and_check(srv, batches)
        assert stop(worker) == 0
    finally:
        if worker.poll() is None:
            os.killpg(worker.pid, signal.SIGKILL)
        assert srv.stop() == 0, srv.log()
    check_data_dir(srv.data, batches, [str(token)])


def test_kernelgate_eval_keeps_its_callers_secrets(tmp_path):
    task, kernel = tmp_path / "task.py", tmp_path / "kernel.py"
    hunting_task, hunting_kernel = tmp_path / "hunting_task.py", tmp_path / "hunting_kernel.py"
    for p, text in ((task, TASK), (kernel, KERNEL), (hunting_task, HUNTING_TASK), (hunting_kernel, HUNTING_KERNEL)):
        p.write_text(text)
    env = {**os.environ, **secret_env()}
    # A parent with the canary on its command line, as a shell script calling eval would have.
    wrap = [sys.executable, "-c", "import subprocess, sys; sys.exit(subprocess.call(sys.argv[2:]))", CANARY]
    runs = {}
    for name, t, k in (("candidate", task, hunting_kernel), ("reference", hunting_task, kernel)):
        p = subprocess.run(wrap + [str(BIN), "eval", "--task", str(t), "--kernel", str(k), "--seeds", "1", "--json"],
                           env=env, capture_output=True, text=True, timeout=600)
        runs[name] = p
        assert TAG not in p.stdout + p.stderr, (name, p.stdout[-2000:], p.stderr[-2000:])
        assert "HUNT" in p.stdout, (name, p.returncode, p.stdout[-2000:], p.stderr[-2000:])
    verdict = json.loads(runs["candidate"].stdout)
    assert verdict["status"] == "runtime_error", verdict
    assert runs["reference"].returncode != 0 or json.loads(runs["reference"].stdout)["valid"] is False
