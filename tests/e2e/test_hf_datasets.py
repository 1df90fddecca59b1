"""Hugging Face `datasets` (the trainers' own loader) reads every raw table of a real log
and every non-empty export: no column type it lacks (schema 1.3: stage_times, not a MAP)."""

import subprocess

import pyarrow.parquet as pq
import pytest

from conftest import BIN, REPO

datasets = pytest.importorskip("datasets", reason="the trainers venv holds datasets (make test-e2e)")

TASK = (REPO / "datasets" / "ci" / "1_add_relu.py").read_text()
KERNEL = (REPO / "datasets" / "solutions" / "ci" / "1_add_relu.py").read_text()
WRONG = KERNEL.replace("tl.maximum(x + y, 0.0)", "tl.maximum(x - y, 0.0)")


def pa_rows(path):
    import pyarrow as pa
    with pa.OSFile(str(path)) as f:
        return pa.ipc.open_file(f).read_all().num_rows


def fenced(code):
    return f"```python\n{code}\n```\n"


def test_datasets_loads_every_table_and_export(serve, tmp_path):
    s = serve.start()
    opts = {"seeds": 1, "timing": False}
    chat = [{"role": "system", "content": "You write Triton."}, {"role": "user", "content": "Write add_relu."}]
    prompts = [chat, chat, "Try again."]   # DPO pairs only answers to one prompt: the first two
    status, resp = s.post("/v1/rewards", {"task_id": "ci/1_add_relu", "reward_fn": "binary", "options": opts,
                                          "completions": [fenced(KERNEL), fenced(WRONG), "no code"], "wait_s": 120,
                                          "prompts": prompts})
    assert status == 200 and resp["rewards"] == [1.0, 0.0, 0.0], resp
    status, again = s.post("/v1/rewards", {"task_id": "ci/1_add_relu", "reward_fn": "binary", "options": opts,
                                           "completions": [fenced(KERNEL)], "wait_s": 120})
    assert status == 200 and again["cached"] == [True], again
    status, ep = s.post("/v1/episodes", {"task_id": "ci/1_add_relu", "max_turns": 2, "reward_fn": "binary",
                                         "options": opts})
    assert status == 201, ep
    status, st1 = s.post(f"/v1/episodes/{ep['episode_id']}/step", {"completion": fenced(WRONG)})
    assert status == 200 and not st1["done"], st1
    status, st2 = s.post(f"/v1/episodes/{ep['episode_id']}/step", {"completion": fenced(KERNEL)})
    assert status == 200 and st2["done"] and st2["done_reason"] == "solved", st2
    assert s.stop() == 0, s.log()

    root = serve.data / "parquet"
    loaded = {}
    for table in sorted(root.glob("table=*")):
        files = [str(p) for p in table.glob("date=*/part-*.parquet")]
        ds = datasets.load_dataset("parquet", data_files=files, split="train")
        loaded[table.name] = ds.num_rows
    assert loaded.get("table=evaluations") == 6 and loaded.get("table=episode_steps") == 2, loaded
    rows = datasets.load_dataset("parquet", data_files=[str(p) for p in root.glob("table=evaluations/*/*.parquet")],
                                 split="train")
    by_id = {r["eval_id"]: r for r in rows}
    mine = [by_id[f"{resp['batch_id']}-{i:05d}"] for i in range(3)]
    assert [r["prompt"] for r in mine] == [chat, chat, [{"role": "user", "content": "Try again."}]], mine
    assert {x["stage"] for x in mine[0]["stage_times"]} >= {"total"}, mine[0]
    # Harness options are columns; a cached row points to the evaluation that ran.
    assert mine[0]["options"]["seeds"] == 1 and mine[0]["options"]["timing"] is False, mine[0]["options"]
    assert mine[0]["source_eval_id"] is None
    assert by_id[f"{again['batch_id']}-00000"]["source_eval_id"] == mine[0]["eval_id"]
    # Each episode step logs the conversation it answered, and why the episode ended.
    steps = sorted(datasets.load_dataset("parquet", data_files=[str(p) for p in root.glob("table=episode_steps/*/*")],
                                         split="train"), key=lambda r: r["turn"])
    task_prompt = {"role": "user", "content": ep["observation"]["prompt"]}
    assert steps[0]["prompt"] == [task_prompt] and steps[0]["done_reason"] is None, steps[0]
    assert steps[1]["prompt"] == [task_prompt, {"role": "assistant", "content": fenced(WRONG)},
                                  {"role": "user", "content": st1["observation"]["feedback"]}], steps[1]["prompt"]
    assert steps[1]["done_reason"] == "solved" and steps[1]["max_turns"] == 2, steps[1]
    assert by_id[steps[1]["eval_id"]]["prompt"] == steps[1]["prompt"]

    exported = {}
    for fmt in ("verl", "sft", "dpo", "arrow", "trajectories", "search-trees"):
        out = tmp_path / f"out-{fmt}"
        r = subprocess.run([str(BIN), "export", "--format", fmt, "--out", str(out), "--data", str(serve.data),
                            "--tasks", str(REPO / "datasets" / "ci")], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        for f in sorted(out.glob("*.parquet")):
            if pq.ParquetFile(f).metadata.num_rows == 0:
                continue   # an empty export is a schema-only file: datasets refuses 0-row files
            exported[f"{fmt}/{f.name}"] = datasets.load_dataset("parquet", data_files=[str(f)], split="train").num_rows
        for f in sorted(out.glob("*.arrow")):   # arrow writes no file for a table with no row: each loads
            exported[f"{fmt}/{f.name}"] = datasets.load_dataset("arrow", data_files=[str(f)], split="train").num_rows
            assert exported[f"{fmt}/{f.name}"] == pa_rows(f) > 0, f
    # DPO: the chat prompt's pair, and under the task's own prompt the cache hit of the
    # kernel (a repeat without a prompt) over the episode's first turn (a cache hit of WRONG).
    assert exported.get("sft/sft.parquet") == 1 and exported.get("dpo/dpo.parquet") == 2, exported
    pairs = {(r["chosen_eval_id"], r["rejected_eval_id"]) for r in pq.read_table(tmp_path / "out-dpo" / "dpo.parquet").to_pylist()}
    assert pairs == {(mine[0]["eval_id"], mine[1]["eval_id"]), (f"{again['batch_id']}-00000", steps[0]["eval_id"])}, pairs
    assert exported.get("trajectories/trajectories.parquet") == 6, exported   # 4 rewards (1 cached), 2 episode turns
    assert (tmp_path / "out-search-trees" / "search_trees.parquet").exists()  # no search here: an empty file
    assert exported.get("arrow/evaluations.arrow") == 6 and exported.get("arrow/episode_steps.arrow") == 2, exported
