"""Every command in the README's ```sh blocks, run as written on this CPU-only machine, or
named in NOT_RUN with the reason.

A README command that no rule here knows fails the test: a new example is run or
explained, never skipped silently. Commands run with bash in a scratch directory that
links bin/, datasets/ and scripts/ from the repo, in order: every `bin/kernelgate` command
but the exports (before a server holds ./data), then `serve` as the README starts it and
every curl against it, the Auth block last (a key, once it exists, is required by every
request), and, the server stopped, the exports over the log all that wrote. What the test changes, and only that (SUBS):

- localhost:8080 → the test's port; T.py / K.py → datasets/ci/1_add_relu.py and its solution;
- s_XXXX, b_XXXX, e_XXXX, ep_..., exp_XXXX → the ids earlier commands answered;
- `...` after search/adapt flags → the scripted LLM (scripts/scripted_llm.py);
- budgets made CI-sized: --n 100 → 3, a search's steps → 2-3, adapt's → 1, and the
  gateway's search on ci/1_add_relu instead of the GPU-sized level1/8_layernorm;
- serve gets --llm-url/--model (the README says searches need them), and request.json is
  a rewards request the test writes.

Each curl must answer 2xx (the status is appended with -w), each command exit 0.
"""

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

from conftest import REPO, free_port

# Not run here, by the start of the command (its comment stripped), with the reason.
NOT_RUN = {
    "head -c 32 /dev/urandom": "part of the remote-workers pair, which tests/e2e/test_remote_workers.py runs on loopback",
    "bin/kernelgate serve --addr 0.0.0.0:8080 --nats-listen": "tests/e2e/test_remote_workers.py runs this gateway "
                                                              "(on loopback, with a token file)",
    "bin/kernelgate worker --nats": "tests/e2e/test_remote_workers.py runs this worker against its gateway",
    "make serve": "CI runs `make setup` and `make build`, and this test runs the serve they lead to (below)",
    "make test": "CI runs it (.ci/run); this test is part of it",
    "bin/kernelgate bench --tasks datasets/level2": "GPU-only: level2's tasks are GPU-sized, so in CPU mode "
                                                    "bench skips every one (cmd/kernelgate/cpuestimate.go)",
    "bin/kernelgate tasks check datasets/ --manifest": "GPU-only: it records H200 reference times and solution "
                                                       "speedups into the manifest",
    "bin/kernelgate tasks check datasets/": "make test-tasks runs it in CI (every suite, then a synthetic one)",
    "bin/kernelgate redteam --tasks datasets/ci": "cmd/kernelgate's TestRedteamCatchesEveryClassOnCI runs redteam "
                                                  "over datasets/ci in CI (go test) and checks its report",
    "bin/kernelgate bench --fidelity": "GPU-only: it compares GPU timings; CPU timings are not comparable",
    "bin/kernelgate search --task datasets/level1/8_layernorm.py": "GPU-only: a GPU-sized task, which search "
                                                                   "refuses at once in CPU mode (cpuestimate.go)",
}

SUBS = [  # (pattern, replacement); {port}, {llm} and captured ids are filled in per command
    (r"\b(?:localhost|127\.0\.0\.1):8080\b", "127.0.0.1:{port}"),
    (r"(?<![\w/])T\.py\b", "datasets/ci/1_add_relu.py"),
    (r"(?<![\w/])K\.py\b", "datasets/solutions/ci/1_add_relu.py"),
    (r"--n 100\b", "--n 3"),
    (r"(search --task \S+) --steps 40", r"\1 --steps 2"),
    (r"(search --resume \S+) --steps 60", r"\1 --steps 3"),
    (r"(adapt .*)--steps 20", r"\1--steps 1"),
    (r'"task_id": "level1/8_layernorm", "steps": 40', '"task_id": "ci/1_add_relu", "steps": 2'),
    (r" \.\.\.(?=\s|$)", " --llm-url {llm} --model scripted"),
]
IDS = {"s_XXXX": "search_id", "b_XXXX": "batch_id", "e_XXXX": "id", "ep_...": "episode_id", "exp_XXXX": "export_id"}


def readme_commands():
    """The README's ```sh blocks split into commands: comment lines dropped, a command
    runs on over backslashes and open quotes (bash -n says when it is whole)."""
    text = (REPO / "README.md").read_text()
    out = []
    for block in re.findall(r"^```sh\n(.*?)^```", text, re.M | re.S):
        buf = ""
        for line in block.splitlines():
            if not buf and (not line.strip() or line.lstrip().startswith("#")):
                continue
            buf = f"{buf}\n{line}" if buf else line
            if buf.rstrip().endswith("\\") or subprocess.run(["bash", "-n", "-c", buf], capture_output=True).returncode:
                continue
            out.append(buf)
            buf = ""
        assert not buf, f"an unfinished command in the README: {buf!r}"
    return out


def head(cmd):
    """The command's first line without its comment, for NOT_RUN."""
    return cmd.splitlines()[0].split("  #")[0].strip()


def not_run(cmd):
    h = head(cmd)
    return next((why for start, why in NOT_RUN.items() if h.startswith(start)), None)


class Scratch:
    """A scratch working directory, the scripted LLM, captured ids and the server."""

    def __init__(self, tmp):
        self.dir, self.ids, self.env = tmp, {}, {**os.environ, "KERNELGATE_CONCURRENCY": "2"}
        for name in ("bin", "datasets", "scripts"):
            (tmp / name).symlink_to(REPO / name)
        self.port, llm_port = free_port(), free_port()
        self.llm = f"http://127.0.0.1:{llm_port}/v1"
        self.llm_proc = subprocess.Popen([sys.executable, str(REPO / "scripts" / "scripted_llm.py"), "--port",
                                          str(llm_port), "--kernel", str(REPO / "datasets/solutions/ci/1_add_relu.py")])
        self.serve = None

    def fill(self, cmd):
        for pat, rep in SUBS:
            cmd = re.sub(pat, rep.replace("{port}", str(self.port)).replace("{llm}", self.llm), cmd)
        for placeholder, key in IDS.items():
            if placeholder in cmd:
                assert key in self.ids, f"{placeholder} before any command answered a {key}: {cmd!r}"
                cmd = cmd.replace(placeholder, self.ids[key])
        return cmd

    def capture(self, out):
        """Ids from a JSON answer (or the last JSON line of a command's output)."""
        for line in reversed(out.strip().splitlines() or [""]):
            try:
                doc = json.loads(line if line.startswith("{") else out)
            except ValueError:
                continue
            if isinstance(doc, dict):
                for key in IDS.values():
                    v = doc.get(key)
                    if isinstance(v, str) and (key != "id" or v.startswith("e_")):
                        self.ids[key] = v
            return

    def run(self, cmd, timeout=300):
        is_curl = cmd.startswith("curl ")
        filled = self.fill(cmd)
        if is_curl:  # the status on a last line of its own
            filled = filled.replace("curl ", "curl -w '\\n%{http_code}' ", 1)
        p = subprocess.run(["bash", "-c", filled], cwd=self.dir, env=self.env, capture_output=True, text=True,
                           timeout=timeout)
        assert p.returncode == 0, f"{filled}\nexit {p.returncode}\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}"
        out = p.stdout
        if is_curl:
            out, _, status = out.rpartition("\n")
            assert status.startswith("2"), f"{filled}\nHTTP {status}\n{out[-2000:]}"
        self.capture(out)
        return out

    def start_serve(self, cmd):
        filled = self.fill(cmd).split("  #")[0] + f" --llm-url {self.llm} --model scripted"
        log = open(self.dir / "serve.log", "wb")
        self.serve = subprocess.Popen(["bash", "-c", "exec " + filled], cwd=self.dir, env=self.env, stdout=log,
                                      stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            assert self.serve.poll() is None, (self.dir / "serve.log").read_text()[-3000:]
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/readyz", timeout=2):
                    return
            except (OSError, urllib.error.HTTPError):
                time.sleep(0.2)
        pytest.fail("serve not ready:\n" + (self.dir / "serve.log").read_text()[-3000:])

    def stop_serve(self):
        if self.serve and self.serve.poll() is None:
            self.serve.send_signal(signal.SIGTERM)
            assert self.serve.wait(90) == 0, (self.dir / "serve.log").read_text()[-3000:]

    def close(self):
        self.llm_proc.kill()
        self.stop_serve()


@pytest.fixture
def scratch(tmp_path):
    s = Scratch(tmp_path)
    yield s
    s.close()


def test_every_readme_command_is_run_or_says_why_not():
    cmds = readme_commands()
    assert len(cmds) > 40, len(cmds)
    known = ("bin/kernelgate ", "curl ", "make ")
    strangers = [c for c in cmds if not c.startswith(known) and not not_run(c)]
    assert not strangers, f"README commands this test cannot run; run them here or add them to NOT_RUN: {strangers}"
    reasons = [start for start in NOT_RUN if not any(head(c).startswith(start) for c in cmds)]
    assert not reasons, f"NOT_RUN names commands the README no longer has: {reasons}"


def test_readme_commands_run_as_written(scratch):
    cmds = [c for c in readme_commands() if not not_run(c)]
    serve = [c for c in cmds if c.startswith("bin/kernelgate serve")]
    assert len(serve) == 1, serve
    auth = [c for c in cmds if c.startswith("bin/kernelgate keys") or "Authorization" in c]
    exports = [c for c in cmds if c.startswith("bin/kernelgate export")]
    cli = [c for c in cmds if c.startswith("bin/kernelgate") and c not in serve + auth + exports]
    curls = [c for c in cmds if c.startswith("curl") and c not in auth]
    ran = []
    for c in cli:
        scratch.run(c)
        ran.append(head(c))
    scratch.start_serve(serve[0])
    ran.append(head(serve[0]))
    for c in curls:
        scratch.run(c)
        ran.append(head(c))
    # Auth: request.json is the user's own rewards request; the key is the one keys create
    # printed. The key is revoked last: keys.json then holds none and nobody gets in, which
    # only the offline exports below follow.
    (scratch.dir / "request.json").write_text(json.dumps({"task_id": "ci/1_add_relu", "completions": ["no code"]}))
    create, listing, revoke = (next(c for c in auth if f"keys {v}" in c) for v in ("create", "list", "revoke"))
    key = scratch.run(create).strip()
    assert re.fullmatch(r"kg_\S+", key), key
    scratch.env["KEY"] = key
    assert "trainer" in scratch.run(listing)
    for c in auth:
        if "Authorization" in c:
            scratch.run(c)
    scratch.run(revoke)
    ran += [head(c) for c in auth]
    # The exports read the log the commands above wrote, once the server has let go of it.
    scratch.stop_serve()
    for c in exports:
        scratch.run(c)
        ran.append(head(c))
    assert len(ran) == len(cmds)
