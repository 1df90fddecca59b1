"""The log keeps every sample as it was, and every export hands a trainer what the API
told it: a real `kernelgate serve` (CPU mode) answers rewards with a duplicate and a
cache hit under another prompt, an idempotent retry, an episode whose turns are cache
hits, a code-only evaluation, then (after a restart) a deadline stop and a broken inline
reference. Then the log and every export of it are read as a trainer reads them:
pyarrow, DuckDB, polars and Hugging Face `datasets`."""

import json
import subprocess

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

from conftest import BIN, REPO, Serve

duckdb = pytest.importorskip("duckdb", reason="the trainers venv holds duckdb (make test-e2e)")
datasets = pytest.importorskip("datasets", reason="the trainers venv holds datasets (make test-e2e)")
polars = pytest.importorskip("polars", reason="the trainers venv holds polars (make test-e2e)")

TASK = (REPO / "datasets" / "ci" / "1_add_relu.py").read_text()
KERNEL = (REPO / "datasets" / "solutions" / "ci" / "1_add_relu.py").read_text()
WRONG = KERNEL.replace("tl.maximum(x + y, 0.0)", "tl.maximum(x - y, 0.0)")
SLOW = KERNEL + "\nimport time as _t\n_f = ModelNew.forward\nModelNew.forward = lambda self, *a: (_t.sleep(60), _f(self, *a))[1]\n"
BROKEN = TASK.replace("return torch.relu(x + y)", "raise RuntimeError('forward is broken')")
OPTS = {"seeds": 1, "timing": False}
CHAT_A = [{"role": "system", "content": "You write Triton kernels."}, {"role": "user", "content": "add_relu, please."}]
CHAT_B = [{"role": "user", "content": "Write add_relu in Triton."}]


def fenced(code, words="Here it is."):
    return f"{words}\n```python\n{code}\n```\n"


def reward(s, body, **kw):
    status, r = s.post("/v1/rewards", {"task_id": "ci/1_add_relu", "options": OPTS, "reward_fn": "binary",
                                       "wait_s": 240, **body}, **kw)
    assert status == 200 and r["status"] == "done", r
    return r


@pytest.fixture(scope="module")
def log(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("samples")
    s = Serve(tmp / "data", tmp).start()
    ids = {}
    try:
        a = reward(s, {"completions": [fenced(KERNEL)], "prompts": [CHAT_A]})
        b = reward(s, {"completions": [fenced(KERNEL, "Other words, same kernel."), fenced(WRONG, "I think this is right.")],
                       "prompts": [CHAT_B, CHAT_B]})
        assert b["cached"] == [True, False] and b["rewards"] == [1.0, 0.0], b
        for _ in range(2):   # a retry: one batch, logged once
            retry = reward(s, {"completions": ["no code at all"]}, headers={"X-Request-ID": "retry-1"})
        status, ep = s.post("/v1/episodes", {"task_id": "ci/1_add_relu", "max_turns": 3, "options": OPTS,
                                             "reward_fn": "binary"})
        assert status == 201, ep
        for code in (WRONG, KERNEL):   # both cache hits of the rewards above
            status, st = s.post(f"/v1/episodes/{ep['episode_id']}/step", {"completion": fenced(code)})
            assert status == 200, st
        assert st["done"], st
        status, e = s.post("/v1/evaluations", {"task_id": "ci/1_add_relu", "code": KERNEL + "\n# code only\n",
                                               "options": OPTS, "reward_fn": "binary", "wait_s": 240})
        assert status == 200 and e["valid"] is True, e
        assert s.stop() == 0, s.log()
        s.start()   # the log goes on across a restart
        late = reward(s, {"completions": [fenced(SLOW)], "deadline_s": 4})
        assert late["valid"] == [False] and late["results"][0]["retry"] == "deadline", late
        status, broken = s.post("/v1/rewards", {"reference": BROKEN, "options": OPTS, "reward_fn": "binary", "wait_s": 240,
                                                "completions": ["Sorry, no code.", fenced(KERNEL)]})
        assert status == 200 and broken["valid"] == [False, False], broken
        ids.update(a=a["batch_id"], b=b["batch_id"], retry=retry["batch_id"], episode=ep["episode_id"], evaluation=e["id"],
                   late=late["batch_id"], broken=broken["batch_id"])
    finally:
        assert s.stop() == 0, s.log()
    data = tmp / "data"
    rows = ds.dataset(data / "parquet" / "table=evaluations", format="parquet", partitioning="hive").to_table().to_pylist()
    return data, ids, {r["eval_id"]: r for r in rows}


def item(batch, i=0):
    return f"{batch}-{i:05d}"


def invalid_ids(ids):
    return {item(ids["late"]), item(ids["broken"], 0), item(ids["broken"], 1)}


def export(tmp_path, data, fmt, *args):
    out = tmp_path / fmt
    p = subprocess.run([str(BIN), "export", "--format", fmt, "--out", str(out), "--data", str(data),
                        "--tasks", str(REPO / "datasets" / "ci"), *args], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    return out, json.loads((out / "manifest.json").read_text())


def test_the_log_marks_what_the_api_said(log):
    data, ids, rows = log
    assert len(rows) == 10, "\n".join([json.dumps(ids)] + sorted(rows))   # a 1, b 2, retry 1, episode 2, evaluation 1, late 1, broken 2
    late, bad = rows[item(ids["late"])], [rows[item(ids["broken"], i)] for i in range(2)]
    assert late["valid"] is False and late["retry"] == "deadline" and late["status"] == "harness_error", late
    for r in bad:   # an inline reference has no task id: null, and task_hash names it
        assert r["valid"] is False and r["task_id"] is None and r["task_hash"] and "forward is broken" in r["task_error"], r
    assert all(r["valid"] is True for i, r in rows.items() if i not in invalid_ids(ids)), rows
    assert all(r["retry"] is None for i, r in rows.items() if i != item(ids["late"]))
    # A code-only evaluation has no completion; the cache hits point at what ran.
    e = rows[item(ids["evaluation"])]
    assert e["completion"] is None and e["code"].endswith("# code only\n"), e
    assert rows[item(ids["b"])]["cached"] and rows[item(ids["b"])]["source_eval_id"] == item(ids["a"])

    db = duckdb.connect()
    for table in ("evaluations", "episode_steps"):
        db.execute(f"CREATE VIEW {table} AS SELECT * FROM read_parquet('{data}/parquet/table={table}/*/*.parquet', "
                   f"hive_partitioning = true, union_by_name = true)")
    dropped = db.execute("SELECT eval_id, status, retry, task_error FROM evaluations WHERE NOT valid").fetchall()
    assert {r[0] for r in dropped} == invalid_ids(ids), dropped
    # No '' stands in for a value not known: every string column of both tables.
    for table in ("evaluations", "episode_steps"):
        cols = [c for c, t in db.execute(f"SELECT column_name, column_type FROM (DESCRIBE {table})").fetchall() if t == "VARCHAR"]
        empty = {c: n for c in cols if c != "code"
                 for n in [db.execute(f"SELECT count(*) FROM {table} WHERE \"{c}\" = ''").fetchone()[0]] if n}
        assert empty == {}, (table, empty)
    assert db.execute("SELECT count(*) FROM evaluations WHERE request_id = 'retry-1'").fetchone()[0] == 1
    assert db.execute("SELECT count(*) FROM evaluations WHERE client_id IS NULL AND gpu_name IS NULL").fetchone()[0] == 10


def test_exports_leave_invalid_samples_out(tmp_path, log):
    data, ids, rows = log
    bad = invalid_ids(ids)
    named = {"sft": ("eval_id",), "dpo": ("chosen_eval_id", "rejected_eval_id"), "trajectories": ("eval_id",)}
    for fmt, cols in named.items():
        out, m = export(tmp_path, data, fmt)
        assert m["skipped"]["invalid"] == 3, (fmt, m["skipped"])
        t = pq.read_table(out / f"{fmt}.parquet")
        got = {v for c in cols for v in t.column(c).to_pylist()}
        assert got and not got & bad, (fmt, got)
    out, m = export(tmp_path, data, "arrow")
    with pa.memory_map(str(out / "evaluations.arrow")) as f:
        arrow_ids = set(pa.ipc.open_file(f).read_all().column("eval_id").to_pylist())
    assert arrow_ids == set(rows) - bad and m["skipped"]["invalid"] == 3, (arrow_ids, m)
    # --include-invalid keeps them, and says so.
    out, m = export(tmp_path / "all", data, "trajectories", "--include-invalid")
    got = set(pq.read_table(out / "trajectories.parquet").column("eval_id").to_pylist())
    assert bad <= got and "invalid" not in m["skipped"] and m["filters"]["include_invalid"] is True, m


def test_dpo_keeps_the_cached_pair(tmp_path, log):
    data, ids, rows = log
    out, m = export(tmp_path, data, "dpo")
    pairs = pq.read_table(out / "dpo.parquet").to_pylist()
    by = {(p["chosen_eval_id"], p["rejected_eval_id"]): p for p in pairs}
    cached = by.get((item(ids["b"], 0), item(ids["b"], 1)))
    assert cached and cached["prompt"] == CHAT_B, pairs   # the cache hit is B's chosen side, under B's prompt
    assert cached["chosen"][0]["content"].startswith("Other words, same kernel."), cached
    assert "cached" not in m["skipped"], m
    # At most N pairs per task, whatever the number of prompts it was asked under.
    assert len({json.dumps(p["prompt"]) for p in pairs}) >= 2, pairs
    _, m = export(tmp_path / "one", data, "dpo", "--max-pairs-per-task", "1")
    assert m["rows"] == 1, m
    # SFT: a cached answer is the completion's verdict; with the run it repeats filtered
    # out by time, the cache hit stands in for it.
    since = rows[item(ids["b"])]["ts"].isoformat()
    out, m = export(tmp_path / "since", data, "sft", "--since", since)
    sft = pq.read_table(out / "sft.parquet").to_pylist()
    assert len(sft) == 1 and rows[sft[0]["eval_id"]]["cached"], sft


def test_trajectory_rows_say_what_is_real(tmp_path, log):
    data, ids, rows = log
    out, _ = export(tmp_path, data, "trajectories")
    t = {r["eval_id"]: r for r in pq.read_table(out / "trajectories.parquet").to_pylist()}
    for i, r in t.items():
        if r["source"] == "reward":
            assert r["done"] is True, r   # a reward is a one-step episode
    turns = sorted((r for r in t.values() if r["source"] == "episode"), key=lambda r: r["step"])
    assert [r["done"] for r in turns] == [False, True], turns
    assert t[item(ids["a"])]["prompt_source"] == "sent" and t[item(ids["a"])]["prompt"] == CHAT_A
    assert t[item(ids["retry"])]["prompt_source"] == "task" and "ModelNew" in t[item(ids["retry"])]["prompt"][0]["content"]
    e = t[item(ids["evaluation"])]
    assert e["completion"] is None and e["code"].endswith("# code only\n") and e["prompt_source"] == "task", e
    assert all(r["prompt_source"] == "sent" for r in turns), turns
    assert {r["prompt_source"] for r in t.values()} <= {"sent", "task"}


def test_every_export_loads_in_datasets_duckdb_and_polars(tmp_path, log, monkeypatch):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    data, _, _ = log
    loaded = {}
    for fmt in ("verl", "sft", "dpo", "trajectories", "arrow"):
        out, m = export(tmp_path, data, fmt)
        for name, n in m["files"].items():   # every file written, none skipped for being empty
            kind = "arrow" if name.endswith(".arrow") else "parquet"
            got = datasets.load_dataset(kind, data_files=[str(out / name)], split="train", cache_dir=str(tmp_path / "hf"))
            assert got.num_rows == n > 0, (fmt, name, n)
            if kind == "parquet":
                assert duckdb.connect().execute(f"SELECT count(*) FROM read_parquet('{out / name}')").fetchall()[0][0] == n
            read = polars.read_ipc if kind == "arrow" else polars.read_parquet
            assert read(out / name).height == n, (fmt, name)
            loaded[f"{fmt}/{name}"] = n
        if fmt == "arrow":
            assert "rejected.arrow" in m["empty"] and not (out / "rejected.arrow").exists(), m
            assert m["filters_applied"]["evaluations.arrow"] == ["valid"], m["filters_applied"]
    assert loaded["arrow/evaluations.arrow"] == 7 and loaded["arrow/episode_steps.arrow"] == 2, loaded
    # A status filter says which files it selected.
    _, m = export(tmp_path / "correct", data, "arrow", "--status", "correct")
    assert m["filters_applied"]["evaluations.arrow"] == ["status", "valid"], m
    assert m["filters_applied"]["episode_steps.arrow"] == ["status"] and m["files"]["episode_steps.arrow"] == 1, m
