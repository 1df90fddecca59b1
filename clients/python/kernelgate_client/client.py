"""HTTP client for POST /v1/rewards and GET /v1/batches/{id} (openapi.yaml)."""

import json
import os
import time
import urllib.error
import urllib.request

DEFAULT_URL = "http://127.0.0.1:8080"


class KernelgateError(Exception):
    """A 4xx/5xx answer: `status` (HTTP), `code` (stable API error code), `message`."""

    def __init__(self, status, code, message, field=""):
        super().__init__(f"kernelgate {status} {code}: {message}")
        self.status, self.code, self.message, self.field = status, code, message, field


def task_fields(task):
    """A task given as an id ("level2/1_gemm_bias_relu") or as KernelBench-format source.

    Source always defines a class, so it has a newline; an id never does."""
    task = (task or "").strip()
    if not task:
        raise ValueError("a task is required: a registered task id or the reference source")
    return {"reference": task} if "\n" in task else {"task_id": task}


class Client:
    """One gateway. url and api_key default to $KERNELGATE_URL and $KERNELGATE_API_KEY.

    Requests that come back 429 (queue full, rate limited) are retried after the
    server's Retry-After, up to `retries` times; a batch that outlives the server's
    wait bound (202) is polled until it is done."""

    def __init__(self, url=None, api_key=None, timeout_s=3600.0, retries=20, poll_s=1.0):
        self.url = (url or os.environ.get("KERNELGATE_URL") or DEFAULT_URL).rstrip("/")
        self.api_key = api_key if api_key is not None else os.environ.get("KERNELGATE_API_KEY")
        self.timeout_s, self.retries, self.poll_s = timeout_s, retries, poll_s

    def rewards(self, *, task_id=None, reference=None, completions=None, codes=None,
                reward_fn=None, options=None, wait_s=None):
        """Rewards and verdicts for a batch of completions (or codes), in request order."""
        body = {k: v for k, v in dict(task_id=task_id, reference=reference, completions=completions,
                                      codes=codes, reward_fn=reward_fn, options=options,
                                      wait_s=wait_s).items() if v is not None}
        status, resp = self._call("POST", "/v1/rewards", body)
        deadline = time.monotonic() + self.timeout_s
        while status == 202:             # still running: follow the batch
            if time.monotonic() > deadline:
                raise TimeoutError(f"batch {resp.get('batch_id')} not done after {self.timeout_s} s")
            time.sleep(self.poll_s)
            status, resp = self._call("GET", f"/v1/batches/{resp['batch_id']}")
            if resp.get("status") == "running":
                status = 202
        return resp

    def _call(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        for attempt in range(self.retries + 1):
            req = urllib.request.Request(self.url + path, data=data, method=method, headers=headers)
            try:
                with urllib.request.urlopen(req, timeout=self.timeout_s) as r:
                    return r.status, json.load(r)
            except urllib.error.HTTPError as e:
                err = _error_body(e)
                if e.code == 429 and attempt < self.retries:
                    time.sleep(_retry_after(e))
                    continue
                raise KernelgateError(e.code, err.get("code", "http_error"), err.get("message", str(e)),
                                      err.get("field", "")) from None
        raise AssertionError("unreachable")


def rewards_by_group(client, completions, groups):
    """Rewards of completions[i] under groups[i] = (task, reward_fn, options), one request
    per distinct group, so that a GRPO group is evaluated as one batch. Returns (rewards,
    valid) in input order; valid is False where the gateway says the reward is not the
    model's doing (a harness or task error)."""
    if len(completions) != len(groups):
        raise ValueError(f"{len(completions)} completions, {len(groups)} groups")
    by = {}
    for i, (task, reward_fn, options) in enumerate(groups):
        by.setdefault((task, reward_fn, json.dumps(options, sort_keys=True)), []).append(i)
    rewards, valid = [0.0] * len(completions), [True] * len(completions)
    for (task, reward_fn, options), idx in by.items():
        resp = client.rewards(completions=[completions[i] for i in idx], reward_fn=reward_fn,
                              options=json.loads(options), **task_fields(task))
        for i, r, ok in zip(idx, resp["rewards"], resp.get("valid") or [True] * len(idx)):
            rewards[i] = float(r) if r is not None else 0.0
            valid[i] = r is not None and ok is not False
    return rewards, valid


def _error_body(e):
    try:
        body = json.loads(e.read())
        return body if isinstance(body, dict) else {}
    except ValueError:
        return {}


def _retry_after(e):
    try:
        return min(max(float(e.headers.get("Retry-After", "1")), 0.1), 60.0)
    except ValueError:
        return 1.0
