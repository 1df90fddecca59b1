"""`kernelgate export` over a real log: the ci suite's solutions (and a wrong kernel, a
slower variant and a cached repeat) evaluated by a real `kernelgate serve` in CPU mode,
then every format exported by bin/kernelgate and read back the way trainers read it:
pyarrow, and Hugging Face `datasets` (Arrow IPC files with pyarrow.ipc)."""

import json
import os
import subprocess
from pathlib import Path

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.ipc as ipc
import pyarrow.parquet as pq
import pytest

from conftest import BIN, REPO, Serve

SOLUTIONS = REPO / "datasets" / "solutions" / "ci"
KERNEL = (SOLUTIONS / "1_add_relu.py").read_text()
WRONG = KERNEL.replace("tl.maximum(x + y, 0.0)", "tl.maximum(x - y, 0.0)")
CI_IDS = sorted(f"ci/{p.stem}" for p in (REPO / "datasets" / "ci").glob("*.py"))


def fenced(code):
    return f"```python\n{code}\n```\n"


@pytest.fixture(scope="module")
def logged(tmp_path_factory):
    """A data directory whose log holds real evaluations of every ci task."""
    tmp = tmp_path_factory.mktemp("exports")
    srv = Serve(tmp / "data", tmp).start()
    try:
        n = 0
        for task_id in CI_IDS:
            code = (SOLUTIONS / (task_id.split("/")[1] + ".py")).read_text()
            completions = [fenced(code)]
            if task_id == "ci/1_add_relu":  # a wrong kernel and a second correct one
                completions += [fenced(WRONG), fenced(KERNEL + "\n# a variant\n")]
            status, resp = srv.post("/v1/rewards", {"task_id": task_id, "completions": completions,
                                                    "reward_fn": "binary", "wait_s": 600})
            assert status == 200, resp
            n += len(completions)
        # A repeat is answered from the cache: logged, but no new evaluation.
        status, resp = srv.post("/v1/rewards", {"task_id": "ci/1_add_relu", "completions": [fenced(KERNEL)],
                                                "reward_fn": "binary", "wait_s": 600})
        assert status == 200 and resp["rewards"] == [1.0], resp
    finally:
        assert srv.stop() == 0, srv.log()  # the sink flushes on a clean stop
    rows = ds.dataset(tmp / "data" / "parquet" / "table=evaluations", format="parquet",
                      partitioning="hive").to_table().to_pylist()
    assert len(rows) == n + 1, len(rows)
    assert all(r["task_source"] for r in rows), "every row carries its task's source"
    return tmp / "data", rows


def export(tmp_path, data, fmt, *args, check=True):
    out = tmp_path / fmt
    p = subprocess.run([str(BIN), "export", "--format", fmt, "--data", str(data), "--out", str(out),
                        "--tasks", str(REPO / "datasets" / "ci"), *args],
                       capture_output=True, text=True, cwd=REPO, timeout=120)
    if check:
        assert p.returncode == 0, p.stderr
    return out, p


def manifest(out):
    return json.loads((out / "manifest.json").read_text())


def hf(path):
    import datasets  # imported late: its cache goes under the test's tmp dir (fixture below)
    return datasets.load_dataset("parquet", data_files={"x": str(path)})["x"]


@pytest.fixture(autouse=True)
def hf_offline(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "hf" / "datasets"))


def strip(t):
    """A type without nullability, to compare layouts."""
    if pa.types.is_list(t):
        return pa.list_(strip(t.value_type))
    if pa.types.is_struct(t):
        return pa.struct([(f.name, strip(f.type)) for f in t])
    return t


MESSAGES = pa.list_(pa.struct([("role", pa.string()), ("content", pa.string())]))


def test_verl_layout(tmp_path, logged):
    data, _ = logged
    out, _ = export(tmp_path, data, "verl", "--test-fraction", "0.25")
    m = manifest(out)
    assert m["format"] == "verl" and m["schema_version"] == "1" and m["rows"] == len(CI_IDS)
    assert m["files"]["test.parquet"] >= 1 and m["files"]["train.parquet"] >= 1
    assert sorted(m["sources"]) == sorted(f"datasets/{i}.py" for i in CI_IDS)
    want = {
        "data_source": pa.string(), "prompt": MESSAGES, "ability": pa.string(),
        "reward_model": pa.struct([("style", pa.string()), ("ground_truth", pa.string())]),
        "extra_info": pa.struct([("split", pa.string()), ("index", pa.int64()), ("task_id", pa.string()),
                                 ("suite", pa.string()), ("level", pa.int64()), ("name", pa.string()),
                                 ("prompt", MESSAGES)]),   # repeated: verl hands compute_score extra_info only
        "task_id": pa.string(),
    }
    seen = []
    for split in ("train", "test"):
        t = pq.read_table(out / f"{split}.parquet")
        assert {f.name: strip(f.type) for f in t.schema} == want
        assert t.num_rows == m["files"][f"{split}.parquet"]
        d = hf(out / f"{split}.parquet")
        assert list(d.features) == list(want)
        for i, row in enumerate(d):
            task_id = row["reward_model"]["ground_truth"]
            assert row["task_id"] == task_id
            assert task_id in CI_IDS and row["reward_model"]["style"] == "rule"
            assert row["data_source"] == "kernelgate/ci" and row["ability"] == "triton_kernel"
            assert row["extra_info"] == {"split": split, "index": i, "task_id": task_id, "suite": "ci", "level": 0,
                                         "name": task_id.split("/")[1], "prompt": row["prompt"]}
            assert len(row["prompt"]) == 1 and row["prompt"][0]["role"] == "user"
            source = (REPO / "datasets" / f"{task_id}.py").read_text()
            assert source.strip() in row["prompt"][0]["content"] and "ModelNew" in row["prompt"][0]["content"]
            seen.append(task_id)
    assert sorted(seen) == CI_IDS


def best(rows, task_id):
    # A cached answer is a row like any other: the repeat ties with what it repeats, and the earlier wins.
    ok = [r for r in rows if r["task_id"] == task_id and r["status"] == "correct"]
    return sorted(ok, key=lambda r: (-(r["speedup"] if r["speedup"] is not None else float("-inf")), r["ts"],
                                     r["eval_id"]))[0]


def test_sft_holds_the_best_kernel(tmp_path, logged):
    data, rows = logged
    out, _ = export(tmp_path, data, "sft")
    m = manifest(out)
    assert m["skipped"] == {"no_prompt": 0, "invalid": 0} and m["files"] == {"sft.parquet": len(CI_IDS)}
    assert all(s.startswith("parquet/table=evaluations/") for s in m["sources"])
    t = pq.read_table(out / "sft.parquet")
    assert strip(t.schema.field("messages").type) == MESSAGES
    d = hf(out / "sft.parquet")
    assert d.num_rows == len(CI_IDS)
    for row in d:
        b = best(rows, row["task_id"])
        assert row["eval_id"] == b["eval_id"] and row["code_hash"] == b["code_hash"] and row["speedup"] == b["speedup"]
        user, assistant = row["messages"]
        assert user["role"] == "user" and b["task_source"].strip() in user["content"]
        assert assistant == {"role": "assistant", "content": "```python\n" + b["code"].rstrip("\n") + "\n```"}


def test_dpo_pairs(tmp_path, logged):
    data, rows = logged
    out, _ = export(tmp_path, data, "dpo", "--task", "ci/1_*")
    m = manifest(out)
    d = hf(out / "dpo.parquet")
    assert m["files"]["dpo.parquet"] == d.num_rows >= 1 and m["filters"]["task"] == ["ci/1_*"]
    by_id = {r["eval_id"]: r for r in rows}
    for row in d:
        chosen, rejected = by_id[row["chosen_eval_id"]], by_id[row["rejected_eval_id"]]
        assert row["task_id"] == "ci/1_add_relu" and chosen["status"] == "correct"
        assert row["rejected_status"] == rejected["status"]
        assert rejected["status"] != "correct" or chosen["speedup"] >= 1.1 * rejected["speedup"]
        assert row["prompt"][0]["role"] == "user" and row["chosen"][0]["role"] == "assistant"
        # the model's own text where it was logged, else its code as one fenced block
        want = rejected["completion"] or "```python\n" + rejected["code"].rstrip("\n") + "\n```"
        assert row["rejected"] == [{"role": "assistant", "content": want}]
    assert any(r["rejected_status"] == "incorrect" for r in d)


def test_arrow_and_filters(tmp_path, logged):
    data, rows = logged
    out, _ = export(tmp_path, data, "arrow", "--status", "correct", "--task", "ci/1_add_relu")
    m = manifest(out)
    with pa.memory_map(str(out / "evaluations.arrow")) as f:
        t = ipc.open_file(f).read_all()
    want = [r for r in rows if r["status"] == "correct" and r["task_id"] == "ci/1_add_relu"]
    assert t.num_rows == m["files"]["evaluations.arrow"] == len(want) == 3
    assert set(t.column("eval_id").to_pylist()) == {r["eval_id"] for r in want}
    assert "task_source" in t.schema.names and "skills.arrow" not in m["files"]
    # A table no row of which matched is not written (datasets refuses a file of 0 rows): the manifest says so.
    assert m["empty"] == ["episode_steps.arrow", "rejected.arrow"], m
    assert not any((out / name).exists() or name in m["files"] for name in m["empty"]), m
    assert m["filters_applied"]["evaluations.arrow"] == ["task", "status", "valid"], m["filters_applied"]
    assert m["filters_applied"]["rejected.arrow"] == [], m["filters_applied"]


def test_empty_match_and_bad_input(tmp_path, logged):
    data, _ = logged
    out, p = export(tmp_path, data, "sft", "--since", "2100-01-01")
    assert "0 rows matched" in p.stderr
    t = pq.read_table(out / "sft.parquet")
    assert t.num_rows == 0 and "messages" in t.schema.names and manifest(out)["rows"] == 0
    # load_dataset refuses a split of 0 rows ("corresponds to no data"): check that
    # datasets maps the empty file's schema to the same features instead.
    import datasets
    assert list(datasets.Features.from_arrow_schema(t.schema)) == ["messages", "task_id", "eval_id", "speedup", "code_hash"]
    out, p = export(tmp_path, data, "skills")  # no skills table yet: an empty dataset
    assert pq.read_table(out / "skills.parquet").num_rows == 0

    for args, code, msg in [(["--format", "csv"], 2, "unknown format"), (["--format", "sft", "--until", "later"], 2, "--until"),
                            (["--format", "sft", "--data", str(tmp_path)], 1, "no log under")]:
        out = tmp_path / "bad"
        p = subprocess.run([str(BIN), "export", "--data", str(data), "--out", str(out), *args],
                           capture_output=True, text=True, cwd=REPO, timeout=60)
        assert p.returncode == code and msg in p.stderr, (args, p.returncode, p.stderr)
        assert not out.exists()


def test_post_exports_on_a_real_server(tmp_path, logged):
    """POST /v1/exports on `kernelgate serve` writes the same dataset as the CLI."""
    data, _ = logged
    cli, _ = export(tmp_path, data, "sft")
    srv = Serve(data, tmp_path).start()
    try:
        status, m = srv.post("/v1/exports", {"format": "sft"})
        assert status == 201, m
        assert m["files"] == {"sft.parquet": len(CI_IDS)} and m["export_id"], m
        served = pq.read_table(data / "exports" / m["export_id"] / "sft.parquet")
        assert served.sort_by("task_id").to_pylist() == pq.read_table(cli / "sft.parquet").sort_by("task_id").to_pylist()
        status, err = srv.post("/v1/exports", {"format": "csv"})
        assert status == 400 and "csv" in json.dumps(err), err
    finally:
        assert srv.stop() == 0, srv.log()
