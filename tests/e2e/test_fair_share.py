"""Fair share between API keys: on a serve with one evaluation slot, a key that
queued 10 items first does not keep another key's 2 waiting behind all of them; the
worker takes the keys' lanes in turn (dispatch/lanes.go)."""
import subprocess

from conftest import BIN, REPO, Serve

TASK = (REPO / "datasets" / "ci" / "1_add_relu.py").read_text()
KERNEL = (REPO / "datasets" / "solutions" / "ci" / "1_add_relu.py").read_text()


def create_key(data, name):
    r = subprocess.run([str(BIN), "keys", "create", "--scopes", "reward", "--name", name, "--data", str(data)],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def test_a_keys_few_items_do_not_wait_behind_anothers_many(tmp_path):
    data = tmp_path / "data"
    a, b = create_key(data, "trainer-a"), create_key(data, "trainer-b")
    s = Serve(data, tmp_path, env={"KERNELGATE_CONCURRENCY": "1"}).start()
    try:
        codes = lambda tag, n: [KERNEL + f"\n# {tag} {i}\n" for i in range(n)]  # noqa: E731 (distinct: no sharing)
        status, ref = s.post("/v1/rewards", {"reference": TASK, "codes": codes("a", 10), "wait_s": 0}, key=a)
        assert status == 202, ref
        status, done_b = s.post("/v1/rewards", {"reference": TASK, "codes": codes("b", 2), "wait_s": 300},
                                key=b, timeout_s=320)
        assert status == 200 and [r["status"] for r in done_b["results"]] == ["correct"] * 2, done_b
        status, batch_a = s.get(f"/v1/batches/{ref['batch_id']}", key=a)
        assert status == 200, batch_a
        # In turn: about one of a's per one of b's, plus the one running when b came.
        # First come first served would have run all 10 first.
        assert batch_a["done"] <= 5, f"{batch_a['done']} of a's 10 ran before b's 2 were done"
    finally:
        assert s.stop() == 0, s.log()
