"""`kernelgate compact` on a real log: one file per partition, the same rows before and after."""

import subprocess

import pyarrow.dataset as ds

from conftest import BIN, REPO

TASK = (REPO / "datasets" / "ci" / "1_add_relu.py").read_text()


def table(root, name):
    t = ds.dataset(root / f"table={name}", format="parquet", partitioning="hive").to_table()
    return sorted(t.to_pylist(), key=lambda r: r["event_id"])


def test_compact_leaves_one_file_per_partition_with_the_same_rows(serve):
    for i in range(4):   # a stop writes what the sink holds: four runs, four part files at least
        s = serve.start()
        status, resp = s.post("/v1/rewards", {"reference": TASK, "completions": [f"no code {i}", f"none {i}"],
                                               "wait_s": 60})
        assert status == 200, resp
        assert s.stop() == 0, s.log()
    root = serve.data / "parquet"
    parts = sorted(p for p in root.glob("table=*/date=*/part-*.parquet"))
    assert len([p for p in parts if "table=evaluations" in str(p)]) >= 4, parts
    before = table(root, "evaluations")
    assert len(before) == 8
    r = subprocess.run([str(BIN), "compact", "--data", str(serve.data), "--all"], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert "files -> 1" in r.stderr and "8 rows" in r.stderr, r.stderr
    after_parts = sorted(root.glob("table=*/date=*/*"))
    partitions = {p.parent for p in after_parts}
    assert all(len(list(d.iterdir())) == 1 for d in partitions), after_parts
    assert table(root, "evaluations") == before
