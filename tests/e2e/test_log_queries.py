"""The log as a training set: a mixed log built against a live `kernelgate
serve` with a scripted LLM (rewards with prompts, an inline reference, a cache hit, a
retried request, an episode, two searches with a failed step and repeated kernels, and
a rule created from the first search's failures, hit by the second's, retired by hand),
then the queries an ML engineer runs on it, in DuckDB, each asserted."""

import json
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from conftest import BIN, REPO, Serve
from test_search_api import sse

duckdb = pytest.importorskip("duckdb", reason="the trainers venv holds duckdb (make test-e2e)")
polars = pytest.importorskip("polars", reason="the trainers venv holds polars (make test-e2e)")

TASK = (REPO / "datasets" / "ci" / "1_add_relu.py").read_text()
KERNEL = (REPO / "datasets" / "solutions" / "ci" / "1_add_relu.py").read_text()
WRONG = KERNEL.replace("tl.maximum(x + y, 0.0)", "tl.maximum(x - y, 0.0)")
OPTS = {"seeds": 1, "timing": False}


BROKEN = KERNEL.replace("tl.maximum(x + y, 0.0)", "tl.foo(x + y, 0.0)")   # the same error every time
BROKEN_TASK = TASK.replace("return torch.relu(x + y)", "raise RuntimeError('forward is broken')")
RULE = "You cannot call tl.foo: triton.language has no such function."
PROSE = "I would fuse the add and the ReLU into one kernel."   # an answer without code: a failed step
# The proposals, in order, then the honest kernel: the first search's 3 failures make
# the rule (the memory's threshold), its 4th step answers in prose, and the second
# search's first proposal hits the rule.
SCRIPT = ["broken", "broken", "broken", "prose", "broken"]
STEPS = {"sample": 4, "adaexplore": 3}


def fenced(code, words="Here it is."):
    return f"{words}\n```python\n{code}\n```\n"


@pytest.fixture
def llm():
    """An OpenAI-compatible endpoint: the proposals SCRIPT says (tl.foo, or prose), then
    the honest kernel; a rule extraction gets RULE."""
    proposals = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
            text = "\n".join(m.get("content") or "" for m in body.get("messages", []))
            if "Error signature:" in text:
                reply = RULE
            elif "duplicate" in text.lower():
                reply = "NONE"
            else:
                proposals.append(1)
                kind = SCRIPT[len(proposals) - 1] if len(proposals) <= len(SCRIPT) else "kernel"
                reply = PROSE if kind == "prose" else fenced(BROKEN if kind == "broken" else KERNEL)
            out = {"id": "c", "object": "chat.completion", "created": 0, "model": "scripted",
                   "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": reply}}],
                   "usage": {"prompt_tokens": len(text) // 4, "completion_tokens": len(reply) // 4,
                             "total_tokens": len(text) // 4 + len(reply) // 4}}
            data = json.dumps(out).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *a):
            pass

    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{srv.server_address[1]}/v1"
    srv.shutdown()
    srv.server_close()


def build_log(tmp_path, llm_url):
    s = Serve(tmp_path / "data", tmp_path, args=["--llm-url", llm_url, "--model", "scripted"]).start()
    ids = {}
    try:
        chat = [{"role": "system", "content": "You write Triton kernels."}, {"role": "user", "content": "add_relu, fast."}]
        status, r = s.post("/v1/rewards", {"task_id": "ci/1_add_relu", "options": OPTS, "wait_s": 120,
                                           "completions": [fenced(KERNEL), fenced(WRONG, "I think this is right.")],
                                           "prompts": [chat, chat]})
        assert status == 200 and r["rewards"][0] > r["rewards"][1], r
        ids["rewards"] = r["batch_id"]
        status, r = s.post("/v1/rewards", {"reference": TASK, "options": OPTS, "wait_s": 120,
                                           "completions": [fenced(KERNEL, "Inline.")]})
        assert status == 200 and r["cached"] == [True], r   # the same kernel, the same task by content
        ids["inline"] = r["batch_id"]
        status, r = s.post("/v1/rewards", {"reference": BROKEN_TASK, "options": OPTS, "wait_s": 120,
                                           "completions": [fenced(KERNEL)]})
        assert status == 200 and r["valid"] == [False], r   # not the candidate's doing: a sample to drop
        ids["broken"] = r["batch_id"]
        for _ in range(2):                                   # a retry: one batch, logged once
            status, r = s.post("/v1/rewards", {"task_id": "ci/1_add_relu", "options": OPTS, "wait_s": 120,
                                               "completions": ["no code at all"]}, headers={"X-Request-ID": "retry-1"})
            assert status == 200, r
        status, ep = s.post("/v1/episodes", {"task_id": "ci/1_add_relu", "max_turns": 3, "options": OPTS})
        assert status == 201, ep
        for code in (WRONG, KERNEL):
            status, st = s.post(f"/v1/episodes/{ep['episode_id']}/step", {"completion": fenced(code)})
            assert status == 200, st
        ids["episode"] = ep["episode_id"]
        ids["searches"] = []
        for policy in ("sample", "adaexplore"):
            status, ref = s.post("/v1/searches", {"task_id": "ci/1_add_relu", "steps": STEPS[policy], "policy": policy,
                                                  "options": OPTS})
            assert status == 202, ref
            end = sse(s, f"/v1/searches/{ref['search_id']}/events")[-1]
            assert end[0] == "end" and end[1]["state"] == "done", end
            ids["searches"].append(ref["search_id"])
        status, skills = s.get("/v1/skills")
        assert status == 200 and [k["rule"] for k in skills["skills"]] == [RULE], skills
        ids["skill"] = skills["skills"][0]["id"]
        status, r = s.post(f"/v1/skills/{ids['skill']}/retire", {"reason": "the test is done with it"})
        assert status == 200, r
    finally:
        assert s.stop() == 0, s.log()
    return tmp_path / "data", ids


def export(data, fmt, out, *flags):
    r = subprocess.run([str(BIN), "export", "--format", fmt, "--out", str(out), "--data", str(data),
                        "--tasks", str(REPO / "datasets" / "ci"), *flags], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return out


def check_searches(db, data, ids, traj, trees, tmp_path):
    """The search side: steps and calls join by key both ways; a failed step is in the
    exports with its error; a search's repeats and the reward path's kernel are cache
    hits with one code hash; search-trees --since keeps whole trees; no '' stands in for
    a value that is not known."""
    q = lambda sql: db.execute(sql).fetchall()  # noqa: E731
    searches = ", ".join(f"'{s}'" for s in ids["searches"])
    # Each step's calls, by key, both ways (DATA.md's queries): the same pairs, every
    # search call placed, a small step with its reviser and tuner.
    by_step = q("SELECT s.search_id, s.seq, c.call_id FROM search_steps s JOIN llm_calls c ON c.step_id = s.event_id "
                "ORDER BY 1, 2, 3")
    by_list = q("SELECT s.search_id, s.seq, c.call_id FROM search_steps s, unnest(s.call_ids) AS x(id) "
                "JOIN llm_calls c ON c.call_id = x.id ORDER BY 1, 2, 3")
    search_calls = q("SELECT count(*) FROM llm_calls WHERE search_id IS NOT NULL")[0][0]
    assert by_step == by_list and len(by_step) == search_calls > 0, (by_step, by_list, search_calls)
    assert q("SELECT count(*) FROM llm_calls WHERE step_id IS NOT NULL AND step_seq IS NULL OR "
             "search_id IS NULL AND step_id IS NOT NULL")[0][0] == 0
    assert all(len(c) == (2 if a == "small" else 0 if a == "tune" else 1) for a, c in q(
        "SELECT action, call_ids FROM search_steps WHERE failure IS NULL OR failure = 'answer'")), \
        q("SELECT action, call_ids FROM search_steps")

    # The answer in prose is a failed step: reward 0, its error, in trajectories (no
    # evaluation, no status) and in search-trees (no node, no depth).
    failed = q("SELECT search_id, seq, reward, error, completion FROM search_steps WHERE failure = 'answer'")
    assert len(failed) == 1 and failed[0][2] == 0 and "no code" in failed[0][3] and failed[0][4] == PROSE, failed
    sid, seq = failed[0][:2]
    rows = q(f"SELECT eval_id, status, reward, error, completion FROM read_parquet('{traj}') "
             f"WHERE source = 'search' AND trajectory = '{sid}' AND step = {seq}")
    assert rows == [(None, None, 0.0, failed[0][3], PROSE)], rows
    rows = q(f"SELECT node, depth, failure, reward FROM read_parquet('{trees}') WHERE search_id = '{sid}' AND seq = {seq}")
    assert rows == [(None, None, "answer", 0.0)], rows
    # The root is no candidate: no reward; best_reward is the running best.
    roots = q(f"SELECT count(*) FROM read_parquet('{trees}') WHERE action = 'root' AND reward IS NULL AND node = 0")
    assert roots == [(2,)], roots
    curve = q(f"SELECT search_id, best_reward, max(reward) OVER (PARTITION BY search_id ORDER BY seq NULLS FIRST) "
              f"FROM read_parquet('{trees}')")
    assert all(b is None and m is None or b == m for _, b, m in curve), curve

    # A search's repeat is a cache hit pointing at the row that ran; the honest kernel
    # is the reward path's cached verdict; one code hash for it on every path.
    honest = q(f"SELECT code_hash, eval_id FROM evaluations WHERE batch_id = '{ids['rewards']}' AND eval_id LIKE '%-00000'")
    assert len(honest) == 1, honest
    hits = q(f"SELECT cached, source_eval_id FROM evaluations WHERE batch_id IN ({searches}) AND code_hash = '{honest[0][0]}'")
    assert hits and all(c and src == honest[0][1] for c, src in hits), hits
    kernels = db.execute("SELECT count(*), count(DISTINCT code_hash), count(DISTINCT code) FROM evaluations "
                         "WHERE rtrim(code, chr(10) || ' ') = ?", [KERNEL.rstrip()]).fetchall()
    assert kernels[0][0] >= 4 and kernels[0][1:] == (1, 1), kernels
    repeats = q(f"SELECT e.cached, e.source_eval_id, first_value(e.eval_id) OVER (ORDER BY s.seq) FROM search_steps s "
                f"JOIN evaluations e ON e.eval_id = s.eval_id WHERE s.search_id = '{ids['searches'][0]}' "
                f"AND contains(e.code, 'tl.foo') ORDER BY s.seq")
    assert len(repeats) == 3 and not repeats[0][0] and all(c and src == first for c, src, first in repeats[1:]), repeats
    assert q(f"SELECT DISTINCT task_name FROM evaluations WHERE batch_id IN ({searches})") == [("1_add_relu",)]

    # --since keeps whole trees: the first search's third step on, from its root, the
    # two earlier steps counted; no row's parent missing; the depths of the full export.
    third = q(f"SELECT strftime(ts, '%Y-%m-%dT%H:%M:%S.%gZ') FROM search_steps WHERE search_id = '{ids['searches'][0]}' AND seq = 3")
    since = export(data, "search-trees", tmp_path / "trees-since", "--since", third[0][0])
    part = since / "search_trees.parquet"
    manifest = json.loads((since / "manifest.json").read_text())
    assert manifest["context"] == {"earlier_steps": 2}, manifest
    orphans = q(f"SELECT count(*) FROM read_parquet('{part}') t WHERE parent IS NOT NULL AND NOT EXISTS "
                f"(SELECT 1 FROM read_parquet('{part}') p WHERE p.search_id = t.search_id AND p.node = t.parent)")
    assert orphans == [(0,)], orphans
    same = q(f"SELECT count(*) FROM read_parquet('{part}') t JOIN read_parquet('{trees}') f USING (search_id, seq) "
             f"WHERE t.depth IS DISTINCT FROM f.depth OR t.node IS DISTINCT FROM f.node")
    got = q(f"SELECT count(*), count(*) FILTER (WHERE action = 'root') FROM read_parquet('{part}') "
            f"WHERE search_id = '{ids['searches'][0]}'")
    assert same == [(0,)] and got == [(STEPS["sample"] + 1, 1)], (same, got)

    # Nulls are nulls: no '' where a value is not known.
    empty = {f"{t}.{c}": q(f"SELECT count(*) FROM {t} WHERE {c} = ''")[0][0] for t, cols in {
        "search_steps": ["prompt_version", "completion", "code", "model", "error_signature", "feedback", "error", "failure"],
        "llm_calls": ["model", "step_id"],
        "skills": ["torch", "triton", "gpu_arch", "retired_reason", "source_search_id"],
    }.items() for c in cols}
    assert empty == dict.fromkeys(empty, 0), empty


def test_the_log_answers_a_trainers_questions(tmp_path, llm):  # noqa: F811
    data, ids = build_log(tmp_path, llm)
    db = duckdb.connect()
    for table in ("evaluations", "search_steps", "searches", "episode_steps", "llm_calls", "skills"):
        db.execute(f"CREATE VIEW {table} AS SELECT * FROM read_parquet('{data}/parquet/table={table}/*/*.parquet', "
                   f"hive_partitioning = true, union_by_name = true)")
    traj = export(data, "trajectories", tmp_path / "traj") / "trajectories.parquet"
    dpo = export(data, "dpo", tmp_path / "dpo") / "dpo.parquet"
    trees = export(data, "search-trees", tmp_path / "trees") / "search_trees.parquet"
    q = lambda sql: db.execute(sql).fetchall()  # noqa: E731

    # Offline-RL tuples with prompts, for every row kind.
    kinds = dict((k, (n, empty)) for k, n, empty in q(
        f"SELECT source, count(*), count(*) FILTER (WHERE len(prompt) = 0 OR completion = '') "
        f"FROM read_parquet('{traj}') GROUP BY source"))
    assert set(kinds) == {"reward", "episode", "search"} and all(e == 0 for _, e in kinds.values()), kinds

    # The search tree (root included) and its best-so-far curve.
    roots = q(f"SELECT search_id FROM read_parquet('{trees}') WHERE action = 'root' AND node = 0 ORDER BY 1")
    assert [r[0] for r in roots] == sorted(ids["searches"]), roots
    curve = q("SELECT search_id, seq, max(reward) OVER (PARTITION BY search_id ORDER BY seq) FROM search_steps "
              "ORDER BY search_id, seq")
    assert len(curve) == sum(STEPS.values()) and all(a[2] <= b[2] for a, b in zip(curve, curve[1:])
                                                     if a[0] == b[0] and a[2] is not None), curve

    # DPO pairs whose rejected side is what the model wrote.
    pairs = q(f"SELECT d.rejected[1].content, e.completion FROM read_parquet('{dpo}') d "
              f"JOIN evaluations e ON e.eval_id = d.rejected_eval_id")
    assert pairs and all(got == want for got, want in pairs if want is not None), pairs
    assert any("I think this is right." in got for got, _ in pairs), pairs

    # The toolchain of every search step that evaluated something.
    tools = q("SELECT s.eval_id, e.torch, e.triton, e.options.seeds FROM search_steps s "
              "JOIN evaluations e ON e.eval_id = s.eval_id")
    evaluated = q("SELECT count(*) FROM search_steps WHERE eval_id IS NOT NULL")[0][0]
    assert len(tools) == evaluated >= 4 and all(t and tr and seeds == 1 for _, t, tr, seeds in tools), tools

    # 0 unresolved joins.
    unresolved = {
        "search_steps.eval_id": "SELECT count(*) FROM search_steps s WHERE s.eval_id IS NOT NULL AND s.eval_id NOT IN "
                                "(SELECT eval_id FROM evaluations)",
        "episode_steps.eval_id": "SELECT count(*) FROM episode_steps WHERE eval_id NOT IN (SELECT eval_id FROM evaluations)",
        "searches.best_eval_id": "SELECT count(*) FROM searches WHERE best_eval_id IS NOT NULL AND best_eval_id NOT IN "
                                 "(SELECT eval_id FROM evaluations)",
        "llm_calls.search_id": "SELECT count(*) FROM llm_calls WHERE search_id IS NOT NULL AND search_id NOT IN "
                               "(SELECT search_id FROM searches)",
        "evaluations.source_eval_id": "SELECT count(*) FROM evaluations WHERE source_eval_id IS NOT NULL AND "
                                      "source_eval_id NOT IN (SELECT eval_id FROM evaluations)",
    }
    assert {k: q(sql)[0][0] for k, sql in unresolved.items()} == dict.fromkeys(unresolved, 0)

    # The samples the API told the trainer to drop, and why; no '' stands in for a null.
    dropped = q("SELECT eval_id, status, retry, task_error FROM evaluations WHERE NOT valid")
    assert [(e, st) for e, st, _, _ in dropped] == [(f"{ids['broken']}-00000", "harness_error")], dropped
    assert "forward is broken" in dropped[0][3], dropped
    cols = ("request_id", "client_id", "task_id", "gpu_name", "feedback", "error_signature", "task_error", "output_tail")
    empty = q("SELECT " + ", ".join(f"count(*) FILTER (WHERE {c} = '')" for c in cols) + " FROM evaluations")[0]
    assert dict(zip(cols, empty)) == dict.fromkeys(cols, 0), q(
        "SELECT eval_id, batch_id, status, cached, " + ", ".join(cols) + " FROM evaluations WHERE "
        + " OR ".join(f"{c} = ''" for c in cols))
    assert q(f"SELECT task_id FROM evaluations WHERE batch_id = '{ids['broken']}'") == [(None,)]   # an inline task: no id
    check_searches(db, data, ids, traj, trees, tmp_path)

    # Retries logged once; the inline reference logged as its task; each search's final state.
    assert q("SELECT count(*) FROM evaluations WHERE request_id = 'retry-1'")[0][0] == 1
    assert q(f"SELECT DISTINCT task_id FROM evaluations WHERE batch_id = '{ids['inline']}'") == [("ci/1_add_relu",)]
    final = q("SELECT search_id, arg_max(state, ts), arg_max(steps, ts), any_value(seed) FROM searches GROUP BY 1 ORDER BY 1")
    want = sorted(zip(ids["searches"], ("done", "done"), STEPS.values()))
    assert [(s, st, n) for s, st, n, _ in final] == want, final
    # Skill provenance: each version's reason, the failing evaluations behind it, and the
    # search steps whose prompts held the rule.
    versions = q(f"SELECT version, reason FROM skills WHERE skill_id = '{ids['skill']}' ORDER BY version")
    reasons = [r for _, r in versions]
    assert reasons[0] == "created" and "hit" in reasons and reasons[-1].startswith("retired"), versions
    failing = q("SELECT k.version, e.eval_id, e.status, e.error_signature FROM skills k, "
                "unnest(k.example_eval_ids) AS x(id) JOIN evaluations e ON e.eval_id = x.id")
    examples = q("SELECT count(*) FROM skills k, unnest(k.example_eval_ids) AS x(id)")[0][0]
    assert len(failing) == examples >= 3 and all(st != "correct" for _, _, st, _ in failing), failing
    assert len({sig for _, _, _, sig in failing}) == 1 and "AttributeError" in failing[0][3], failing
    retrieved = q(f"SELECT DISTINCT r.ver, k.reason FROM (SELECT unnest(skill_ids) AS id, unnest(skill_versions) AS ver "
                  f"FROM search_steps) r JOIN skills k ON k.skill_id = r.id AND k.version = r.ver "
                  f"WHERE r.id = '{ids['skill']}'")
    assert retrieved and all(reason in ("created", "hit") for _, reason in retrieved), retrieved
    extract = db.execute("SELECT count(*) FROM llm_calls WHERE purpose = 'skill.extract' AND search_id IS NULL "
                         "AND completion = ?", [RULE]).fetchall()
    assert extract[0][0] == 1, extract

    # Every LLM call is a row: per search, their tokens are the search's own count
    # (a tune step makes none; a small step two).
    tokens = q("SELECT c.search_id, sum(c.prompt_tokens + c.completion_tokens), any_value(f.t) FROM llm_calls c "
               "JOIN (SELECT search_id, arg_max(tokens_in + tokens_out, ts) AS t FROM searches GROUP BY 1) f "
               "USING (search_id) GROUP BY 1")
    assert len(tokens) == 2 and all(a == b > 0 for _, a, b in tokens), tokens

    # Hugging Face datasets and polars load every raw table of this log and every
    # non-empty export, with the same rows.
    datasets = pytest.importorskip("datasets")
    loaded = {}
    for table in sorted((data / "parquet").glob("table=*")):
        files = [str(p) for p in table.glob("date=*/part-*.parquet")]
        loaded[table.name[6:]] = datasets.load_dataset("parquet", data_files=files, split="train").num_rows
        assert polars.read_parquet(files).height == loaded[table.name[6:]], table
    assert set(loaded) >= {"evaluations", "search_steps", "searches", "episode_steps", "llm_calls", "skills"}, loaded
    assert all(n > 0 for n in loaded.values()), loaded
    skills = export(data, "skills", tmp_path / "skills") / "skills.parquet"
    for f in (traj, dpo, trees, skills):
        n = datasets.load_dataset("parquet", data_files=[str(f)], split="train").num_rows
        assert n > 0 and polars.read_parquet(f).height == n, f
    arrow = export(data, "arrow", tmp_path / "arrow")
    manifest = json.loads((arrow / "manifest.json").read_text())
    got = {f.stem: datasets.load_dataset("arrow", data_files=[str(f)], split="train").num_rows
           for f in sorted(arrow.glob("*.arrow"))}   # an empty table is not written: every file loads
    assert got == {f.stem: polars.read_ipc(f).height for f in sorted(arrow.glob("*.arrow"))}, got
    assert manifest["empty"] == ["rejected.arrow"], manifest   # nothing was rejected
    assert manifest["skipped"]["invalid"] == 1, manifest   # the broken reference's row
    want = {k: v - (k == "evaluations") for k, v in loaded.items()}
    assert got == want, (got, want)
