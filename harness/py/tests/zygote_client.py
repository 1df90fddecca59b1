"""A test-side stand-in for the Go supervisor: starts a zygote and speaks the protocol.

    with ZygoteClient() as z:
        v = z.evaluate("tasks/1_add.py", code, {"seeds": 2})

The zygote runs as `python -m kgharness.zygote` with fd 3/4 pipes, exactly as Go
starts it. A reader thread (in the test process, never in the zygote) files
every record by id, so several evals can be in flight (submit/wait).
"""

import itertools
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

PY_ROOT = Path(__file__).resolve().parent.parent    # harness/py
RETRIES = 2   # as harness/supervisor.go's maxRetries, for a zygote with its GPU to itself
# Parallel test workers' zygotes share one GPU, each with its share of the budget: a task over
# a share runs alone in its zygote and meets the others' work far more often than a zygote
# with the GPU to itself ever does, so its retries wait longer and come more often.
SHARED_RETRIES = 8

# dup2 the two pipe ends onto fds 3 and 4, then exec the zygote: subprocess can
# only keep fds at the numbers they already have.
_BOOT = (
    "import fcntl,os,sys\n"
    "a=fcntl.fcntl(int(sys.argv[1]),fcntl.F_DUPFD,10); b=fcntl.fcntl(int(sys.argv[2]),fcntl.F_DUPFD,10)\n"
    "[os.close(int(x)) for x in sys.argv[1:3]]\n"
    "os.dup2(a,3); os.dup2(b,4); os.close(a); os.close(b)\n"
    "os.execv(sys.executable,[sys.executable,'-m','kgharness.zygote']+sys.argv[3:])\n"
)


class ZygoteError(RuntimeError):
    pass


def gpu_share_budget_mb(device_index=0):
    """The device memory a GPU-mode zygote's evaluations may reserve together: what the Go
    supervisor gives one zygote (harness/slot.go memoryBudgetMB: the GPU's memory less 8%
    and 1 GiB), split between the pytest workers, each of which runs its own zygote on the
    one GPU. Without it every worker's zygote admits work as if it had the GPU to itself,
    and together they fill it. None when nvidia-smi cannot say."""
    try:
        total = int(subprocess.run(
            ["nvidia-smi", "--query-gpu=memory.total", "--format=csv,noheader,nounits", "-i", str(device_index)],
            capture_output=True, text=True, timeout=30, check=True).stdout.split()[0])
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        return None
    return max(total * 92 // 100 - 1024, 0) // _workers()


def _workers():
    """How many pytest workers (each with its own zygote) share the GPU."""
    return max(int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1") or 1), 1)


class ZygoteClient:
    def __init__(self, mode="cpu_interpreter", evaluator=None, tmp_base=None, env=None,
                 hello_timeout=120.0, python=None, extra_args=(), base_env=None):
        self.mode = mode
        self.records, self.errors = [], []
        self._results = {}
        self._cond = threading.Condition()
        self._ids = itertools.count(1)
        self._eof = False
        to_z_r, self._to_z = os.pipe()
        self._from_z, from_z_w = os.pipe()
        full_env = dict(os.environ if base_env is None else base_env)   # base_env: as Go builds it
        full_env["PYTHONPATH"] = str(PY_ROOT) + os.pathsep + full_env.get("PYTHONPATH", "")
        if mode == "cpu_interpreter":
            full_env["TRITON_INTERPRET"] = "1"
        full_env.update(env or {})
        args = ["--mode", mode, "--device-index", "0"]
        if evaluator:
            args += ["--evaluator", evaluator]
        if tmp_base:
            args += ["--tmp-base", str(tmp_base)]
        args += list(extra_args)
        if mode == "gpu" and "--memory-budget-mb" not in args and (budget := gpu_share_budget_mb()):
            args += ["--memory-budget-mb", str(budget)]
        self._closed_log = None
        self.log = tempfile.NamedTemporaryFile(prefix="zygote-", suffix=".log", delete=False)
        self.proc = subprocess.Popen(
            [python or sys.executable, "-c", _BOOT, str(to_z_r), str(from_z_w)] + args,
            pass_fds=(to_z_r, from_z_w), cwd=str(PY_ROOT), env=full_env,
            stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT)
        os.close(to_z_r)
        os.close(from_z_w)
        self._reader = threading.Thread(target=self._read_loop, daemon=True)
        self._reader.start()
        self.hello = self._wait_for(lambda: next((r for r in self.records if r.get("type") == "hello"), None),
                                    hello_timeout, "hello")

    # ---- transport --------------------------------------------------------
    def _read_loop(self):
        buf = b""
        while True:
            try:
                data = os.read(self._from_z, 1 << 20)
            except OSError:
                data = b""
            if not data:
                with self._cond:
                    self._eof = True
                    self._cond.notify_all()
                return
            buf += data
            *lines, buf = buf.split(b"\n")
            with self._cond:
                for line in lines:
                    if not line.strip():
                        continue
                    rec = json.loads(line)
                    self.records.append(rec)
                    if rec.get("type") == "result":
                        self._results[rec["id"]] = rec
                    elif rec.get("type") == "error":
                        self.errors.append(rec)
                self._cond.notify_all()

    def _wait_for(self, pred, timeout, what):
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                got = pred()
                if got is not None:
                    return got
                left = deadline - time.monotonic()
                if self._eof:
                    raise ZygoteError(f"zygote closed fd 4 before {what}; log:\n{self.log_text()}")
                if left <= 0:
                    raise ZygoteError(f"timed out waiting for {what}; log:\n{self.log_text()}")
                self._cond.wait(min(left, 0.5))

    def send_raw(self, data):
        """Write bytes to the zygote's fd 3 as they are (for garbage tests)."""
        view = memoryview(data)
        while view:
            view = view[os.write(self._to_z, view):]

    def send(self, rec):
        self.send_raw(json.dumps(rec).encode() + b"\n")

    def log_text(self):
        if self._closed_log is not None:
            return self._closed_log
        try:
            return Path(self.log.name).read_text(errors="replace")[-4000:]
        except OSError:
            return ""

    # ---- jobs ---------------------------------------------------------------
    @staticmethod
    def make_task(task):
        """A task from a path to a .py file (read and sent whole) or from source text."""
        if isinstance(task, dict):
            return task
        p = Path(str(task))
        if len(str(task)) < 4096 and str(task).endswith(".py") and p.is_file():
            return {"name": p.stem, "path": str(p.resolve()), "source": p.read_text()}
        return {"name": "inline", "path": "", "source": str(task)}

    def submit(self, task, code, options=None, id=None):
        rid = id or f"job-{next(self._ids)}"
        self.send({"v": 1, "type": "eval", "id": rid,
                   "job": {"task": self.make_task(task), "code": code, "options": options or {}}})
        return rid

    def started(self, rid, timeout=30.0):
        return self._wait_for(lambda: next((r for r in self.records if r.get("type") == "started"
                                            and r.get("id") == rid), None), timeout, f"started {rid}")

    def wait_record(self, rid, timeout=None):
        return self._wait_for(lambda: self._results.get(rid), timeout or 300.0, f"result {rid}")

    def wait(self, rid, timeout=None):
        return self.wait_record(rid, timeout)["verdict"]

    def evaluate(self, task, code, options=None, timeout=None):
        """The verdict, after the retries the Go supervisor makes: a verdict with `retry`
        set (out of GPU memory while other work held it, e.g. other tests' zygotes on the
        same GPU) is not the evaluation's outcome."""
        options = options or {}
        if timeout is None:
            timeout = float(options.get("timeout_s", 120)) + 60.0
        retries = SHARED_RETRIES if self.mode == "gpu" and _workers() > 1 else RETRIES
        for attempt in range(1, retries + 2):
            v = self.wait(self.submit(task, code, options), timeout)
            if not v.get("retry") or attempt > retries:
                return v
            time.sleep(0.25 * attempt if retries == RETRIES else min(1.0 * attempt, 5.0))

    # ---- lifecycle ------------------------------------------------------------
    def alive(self):
        return self.proc.poll() is None

    def close(self, timeout=30.0):
        """Send shutdown, wait for the zygote to exit; return its exit code."""
        if self.proc.poll() is None:
            try:
                self.send({"v": 1, "type": "shutdown"})
            except OSError:
                pass
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for fd in (self._to_z,):
            try:
                os.close(fd)
            except OSError:
                pass
        self._reader.join(5)
        try:
            os.close(self._from_z)
        except OSError:
            pass
        # Kept in memory for assertions made after close; a thousand runs left a thousand logs in /tmp.
        if self._closed_log is None:
            self._closed_log = self.log_text()
            self.log.close()
            Path(self.log.name).unlink(missing_ok=True)
        return self.proc.returncode

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
