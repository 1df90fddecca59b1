"""scripts/measure/grpo_bench.py against a live serve (CPU mode) with the ci suite: groups come back
whole, in order, with the variants' honest verdicts, the run's figures and the group's
shared reference work."""
import json
import subprocess
import sys

from conftest import REPO, Serve


def test_grpo_bench_reports_groups_and_slots(tmp_path):
    srv = Serve(tmp_path / "data", tmp_path).start()
    try:
        out = tmp_path / "grpo.json"
        p = subprocess.run([sys.executable, str(REPO / "scripts" / "measure" / "grpo_bench.py"), "--url", srv.url,
                            "--suite", "ci", "--tasks", "2", "--group", "12", "--stagger", "0.3",
                            "--json", str(out)],
                           capture_output=True, text=True, timeout=600)
        assert p.returncode == 0, p.stderr
        r = json.loads(out.read_text())
    finally:
        assert srv.stop() == 0, srv.log()
    assert (r["groups"], r["evals"], r["slots"], r["stagger_s"]) == (2, 24, 2, 0.3), r
    assert 0 < r["slot_utilisation"] <= 1.05 and r["evals_per_s"] > 0, r
    assert 0 < r["slot_busy"] <= r["slot_utilisation"], r   # the waits left out of the busy share
    for g in r["per_group"]:
        kinds = {m["kind"]: m["status"] for m in g["members"]}
        assert kinds["solution"] == "correct" and kinds["broken"] == "compile_error", kinds
        assert kinds["wrong"] == "incorrect" and kinds["slow"] == "correct", kinds
        why = {m["kind"]: m["feedback"] for m in g["members"]}
        assert why["solution"] is None and "SyntaxError" in why["broken"], why   # why a member failed
        assert "mismatch" in why["wrong"], why
        assert any(k.startswith("num_warps=") for k in kinds), kinds   # the ci solutions launch with num_warps
        assert g["makespan_s"] >= g["slowest_exec_s"] > 0 and g["reference_ms_total"] > 0, g
        assert g["makespan_s"] >= g["gateway_makespan_s"] >= g["slowest_exec_s"], g   # the gateway's makespan_ms
        # Less the group's wait for its first start, the makespan still spans its slowest
        # member's queue wait and run (the client's clock holds the gateway's).
        assert 0 <= g["first_start_s"] < g["makespan_s"], g
        waits = [m["queue_wait_s"] for m in g["members"]]   # each member's start, the first the group's
        assert all(w is not None and w >= 0 for w in waits) and min(waits) == g["first_start_s"], waits
        assert 1 <= g["after_start_over_slowest"] <= g["makespan_over_slowest"], g
        # The group shares its task's reference work (on by default): one member at a time
        # publishes it, the members that run after compare with it.
        shared = [m["reference_shared"] for m in g["members"]]
        assert all(isinstance(x, bool) for x in shared) and sum(shared) >= g["n"] // 2, shared
    assert r["after_start_over_slowest_median"] <= r["makespan_over_slowest_median"], r
    # The two groups were sent 0.3 s apart, in the suite's order, and run one after the
    # other (dispatch queues a key's batches a batch at a time): the second starts once the
    # first's last jobs hold the slots, not beside its first ones.
    first, second = r["per_group"]          # in the suite's order, as sent
    assert second["first_start_s"] + 0.3 >= 0.5 * first["makespan_s"], (first, second)
    assert "evaluations in" in p.stdout and "utilisation" in p.stdout and "after the first start" in p.stdout
