"""HTTP client for POST /v1/rewards and GET /v1/batches/{id}, and for registering tasks
(POST /v1/tasks, GET /v1/task-checks/{id}) (openapi.yaml).

Standard library only, so it runs inside any trainer's environment. No answer
rides on one long HTTP read: a proxy, a NAT or the client's own socket timeout
would cut it and lose the batch id. POST /v1/rewards asks the gateway to wait
(wait_s) a little less than the client's read timeout, so a slow batch comes
back 202 in time and is then polled at GET /v1/batches/{id}.
"""

import http.client
import json
import math
import os
import random
import socket
import time
import urllib.error
import urllib.request
import uuid
from concurrent.futures import ThreadPoolExecutor, as_completed

DEFAULT_URL = "http://127.0.0.1:8080"
# Worth another try: queue full or rate limited, a proxy with no gateway behind
# it (one restarting), the gateway not ready. A 500 or a proxy's 504 is not: the
# batch may already be queued (a retry would be answered from it, but the cause is
# not one that passes). 409 request_in_progress: this request's first copy is
# still being queued.
RETRY_STATUSES = (429, 502, 503)
RETRY_CODES = ("request_in_progress",)
BACKOFF_MAX_S = 30.0      # the longest pause between two attempts of our own choosing
RETRY_AFTER_MAX_S = 60.0  # a longer Retry-After is taken as this (then the deadline decides)
MAX_WAIT_S = 3600         # wait_s bounds in openapi.yaml: 0..3600
MAX_TASK_WAIT_S = 600     # POST /v1/tasks takes wait_s in 0..600
# The status a task check's error would have had as the answer of POST /v1/tasks.
TASK_CHECK_STATUS = {"task_invalid": 422, "task_exists": 409, "internal": 500, "wait_timeout": 504}


class KernelgateError(Exception):
    """A failed call. `status`: the HTTP status, None when no answer came. `code`: the
    gateway's stable error code, or the client's own (unavailable, timeout, bad_response,
    http_<status> for an answer without one). `batch_id`: set once the gateway holds the
    batch; its results stay readable at GET /v1/batches/{batch_id}."""

    def __init__(self, status, code, message, field="", batch_id=None):
        super().__init__(f"kernelgate {status or '-'} {code}: {message}")
        self.status, self.code, self.message, self.field = status, code, message, field
        self.batch_id = batch_id


class KernelgateUnavailable(KernelgateError):
    """Retries ran out: no connection every time, or 429/502/503 every time (then status
    and code are the last answer's, e.g. 429 queue_full)."""

    def __init__(self, url, attempts, elapsed_s, last, batch_id=None):
        super().__init__(last.status, last.code, f"{url}: gave up after {attempts} attempt{'s' * (attempts != 1)} over "
                         f"{elapsed_s:.1f} s; last: {last}", batch_id=batch_id)
        self.attempts = attempts


class KernelgateTimeout(KernelgateError):
    """The batch was not done within the client's timeout_s. It runs on."""

    def __init__(self, batch_id, done, total, timeout_s):
        super().__init__(None, "timeout", f"batch {batch_id}: {done} of {total} verdicts in after "
                         f"{timeout_s:g} s; the rest stay readable at GET /v1/batches/{batch_id}",
                         batch_id=batch_id)


class _Transient(Exception):
    """A failure worth retrying; what KernelgateUnavailable reports when retries run out."""

    def __init__(self, cause, status=None, code="unavailable", retry_after=None, resend=True):
        super().__init__(cause)
        self.status, self.code, self.retry_after, self.resend = status, code, retry_after, resend


def task_fields(task):
    """A task given as an id ("level2/1_gemm_bias_relu") or as KernelBench-format source.

    Source always defines a class, so it has a newline; an id never does."""
    task = (task or "").strip()
    if not task:
        raise ValueError("a task is required: a registered task id or the reference source")
    return {"reference": task} if "\n" in task else {"task_id": task}


class Client:
    """One gateway. url and api_key default to $KERNELGATE_URL and $KERNELGATE_API_KEY.

    timeout_s bounds a whole rewards() call, polling included. read_timeout_s bounds
    each HTTP request; the gateway is asked to wait (wait_s; None: as long as the read
    timeout allows) no longer than that minus headroom. A connection failure or a
    429/502/503 is retried up to `retries` times, after the server's Retry-After or
    else a jittered exponential backoff from backoff_s (capped at 30 s). A running
    batch is polled every poll_s."""

    def __init__(self, url=None, api_key=None, timeout_s=3600.0, retries=10, poll_s=1.0, *,
                 read_timeout_s=120.0, wait_s=None, backoff_s=0.5):
        self.url = (url or os.environ.get("KERNELGATE_URL") or DEFAULT_URL).rstrip("/")
        if not self.url.startswith(("http://", "https://")):
            raise ValueError(f"kernelgate url {self.url!r}: want http:// or https://")
        self.api_key = api_key if api_key is not None else os.environ.get("KERNELGATE_API_KEY")
        self.timeout_s, self.retries, self.poll_s = timeout_s, retries, poll_s
        self.read_timeout_s, self.wait_s, self.backoff_s = read_timeout_s, wait_s, backoff_s

    def rewards(self, *, task_id=None, reference=None, completions=None, codes=None,
                reward_fn=None, options=None, wait_s=None, prompts=None, deadline_s=None,
                finish_reasons=None):
        """Rewards and verdicts for a batch of completions (or codes), in request order.
        The task is task_id (a registered id, GET /v1/tasks) or reference (its source);
        task_fields() tells one from the other for callers that hold either.
        wait_s overrides the client's for this call. prompts (optional, one per item: a
        string or a list of {role, content} messages) is logged with each evaluation.
        finish_reasons (optional, one per completion: the inference server's
        finish_reason, or None when not known) is sent as is: "length" marks a completion
        whose code runs to the end as cut off (invalid_submission, truncated).
        deadline_s gives up on items not finished that long after the gateway accepted
        the batch: they come back harness_error, valid false (drop them)."""
        if reference is not None and "\n" not in reference.strip():
            raise ValueError(f"reference {reference[:60]!r} is one line, not a task's source (class Model, "
                             f"get_inputs, get_init_inputs): to name a registered task pass task_id=")
        deadline = time.monotonic() + self.timeout_s
        body = {k: v for k, v in dict(task_id=task_id, reference=reference, completions=completions,
                                      codes=codes, reward_fn=reward_fn, options=options,
                                      prompts=prompts, deadline_s=deadline_s,
                                      finish_reasons=finish_reasons).items()
                if v is not None}
        body["wait_s"] = self._server_wait(self.wait_s if wait_s is None else wait_s, deadline)
        # Every attempt of this call carries one key: the gateway answers a resent POST
        # from the batch the first one made, so a retry never evaluates (or logs) twice.
        key = {"Idempotency-Key": f"kgc-{uuid.uuid4().hex}"}
        status, resp = self._call("POST", "/v1/rewards", body, deadline, headers=key)
        batch_id = resp.get("batch_id")
        while status == 202 or resp.get("status") == "running":
            if not isinstance(batch_id, str) or not batch_id:
                raise KernelgateError(status, "bad_response", f"a running batch without batch_id: {_snippet(resp)}")
            if time.monotonic() >= deadline:
                raise KernelgateTimeout(batch_id, resp.get("done"), resp.get("total"), self.timeout_s)
            time.sleep(min(self.poll_s, max(0.0, deadline - time.monotonic())))
            status, resp = self._call("GET", f"/v1/batches/{batch_id}", None, deadline, batch_id)
        if not isinstance(resp.get("rewards"), list):
            raise KernelgateError(status, "bad_response", f"an answer without rewards: {_snippet(resp)}",
                                  batch_id=batch_id)
        return resp

    def register_task(self, source, task_id=None):
        """Registers a task (POST /v1/tasks) and returns it (id, task_hash, source, prompt).
        The gateway runs its reference once in the sandbox first: a check that outlives the
        wait comes back 202 and is polled at its location (GET /v1/task-checks/{id}) until
        it ends. A refused task raises KernelgateError: 422 task_invalid with the reason,
        409 task_exists when task_id holds another source. Registering the same source
        under the same id again returns the task (nothing runs)."""
        deadline = time.monotonic() + self.timeout_s
        body = {"source": source, "wait_s": min(self._server_wait(None, deadline), MAX_TASK_WAIT_S)}
        if task_id is not None:
            body["id"] = task_id
        status, resp = self._call("POST", "/v1/tasks", body, deadline)
        while status == 202 or resp.get("status") == "running":
            location = resp.get("location")
            if not isinstance(location, str) or not location.startswith("/v1/task-checks/"):
                raise KernelgateError(status, "bad_response", f"a running task check without location: {_snippet(resp)}")
            if time.monotonic() >= deadline:
                raise KernelgateError(None, "timeout", f"the task check {location} outlived timeout_s={self.timeout_s:g}")
            time.sleep(min(self.poll_s, max(0.0, deadline - time.monotonic())))
            status, resp = self._call("GET", location, None, deadline)
        if resp.get("status") in ("refused", "failed"):
            err = resp.get("error") or {}
            code = err.get("code") or "task_invalid"
            raise KernelgateError(TASK_CHECK_STATUS.get(code, 503), code, err.get("message", ""), err.get("field", ""))
        task = resp.get("task") if resp.get("status") == "registered" else resp
        if not isinstance(task, dict) or not isinstance(task.get("id"), str):
            raise KernelgateError(status, "bad_response", f"an answer without the task: {_snippet(resp)}")
        return task

    def _server_wait(self, wait_s, deadline):
        """wait_s to send: what was asked, at most the read timeout less headroom for
        queueing the batch and sending the answer, and never past the deadline."""
        safe = self.read_timeout_s - min(10.0, self.read_timeout_s / 2)
        wait = safe if wait_s is None else min(wait_s, safe)
        return round(max(0.0, min(wait, deadline - time.monotonic(), MAX_WAIT_S)), 3)

    def _call(self, method, path, body, deadline, batch_id=None, headers=None):
        """(status, JSON object) of one request, retried while the failure is transient
        and neither the retries nor the deadline have run out."""
        start = time.monotonic()
        for attempt in range(1, self.retries + 2):
            try:
                return self._once(method, path, body, headers)
            except KernelgateError as e:   # a poll's 404, say: name the batch it was about
                e.batch_id = e.batch_id or batch_id
                raise
            except _Transient as t:
                delay = t.retry_after if t.retry_after is not None else self._backoff(attempt)
                if not t.resend or attempt > self.retries or time.monotonic() + delay > deadline:
                    raise KernelgateUnavailable(self.url + path, attempt, time.monotonic() - start,
                                                t, batch_id) from None
                time.sleep(delay)
        raise AssertionError("unreachable")

    def _backoff(self, attempt):
        # At least half the step, so pauses keep growing; the random half spreads the
        # many trainer workers that lost the gateway at the same moment.
        step = min(BACKOFF_MAX_S, self.backoff_s * 2 ** (attempt - 1))
        return step / 2 + random.uniform(0, step / 2)

    def _once(self, method, path, body, extra=None):
        headers = {"Content-Type": "application/json", "Accept": "application/json", **(extra or {})}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=self.read_timeout_s) as r:
                return r.status, _json_object(r.status, r.read())
        except urllib.error.HTTPError as e:
            raw = _read(e)
            err = _error_fields(raw)
            code = err.get("code") or f"http_{e.code}"
            message = err.get("message") or f"{e.reason}: {_snippet(raw)}"
            if e.code in RETRY_STATUSES or code in RETRY_CODES:
                raise _Transient(f"{e.code} {code}: {message}", e.code, code, _retry_after(e.headers))
            raise KernelgateError(e.code, code, message, err.get("field", "")) from None
        except (OSError, http.client.HTTPException) as e:
            # Refused, unresolvable or timed out connecting (URLError); reset or closed
            # before the answer; a read timeout; a status line a proxy mangled. A POST
            # that timed out reading reached a gateway now running it (wait_s ends well
            # before the read timeout): sent again without an idempotency key, the batch
            # would be evaluated twice.
            if method == "POST" and isinstance(e, socket.timeout) and "Idempotency-Key" not in headers:
                raise _Transient(f"{_describe(e)}: no answer within {self.read_timeout_s:g} s; "
                                 "not sent again, the gateway may be running it", resend=False) from None
            raise _Transient(_describe(e)) from None


PROMPT_ROLES = ("system", "user", "assistant", "tool", "developer")   # openapi.yaml RewardRequest.prompts


def log_prompt(prompt):
    """A trainer's prompt as the gateway logs it (RewardRequest.prompts): a string as
    is, chat messages with text contents; None for anything else, or no message. A role
    the gateway does not know becomes "user": a log field must not fail a training step."""
    if isinstance(prompt, str):
        return prompt
    if isinstance(prompt, (list, tuple)):
        msgs = [{"role": m.get("role") if m.get("role") in PROMPT_ROLES else "user", "content": message_text(m.get("content"))}
                for m in prompt if isinstance(m, dict)]
        return msgs or None
    return None


def message_text(content):
    """A message's text: a string, or the text parts of a multimodal content list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
    return ""


def rewards_by_group(client, completions, groups, max_workers=8, prompts=None, finish_reasons=None):
    """Rewards of completions[i] under groups[i] = (task, reward_fn, options), one request
    per distinct group, so that a GRPO group is evaluated as one batch; up to max_workers
    groups at once. Returns (rewards, valid) in input order; valid is False where the
    gateway says the reward is not the model's doing (a harness or task error). The
    first group to fail raises its error at once; groups not yet sent are dropped.
    prompts, when given, is one per completion and is logged with its evaluation;
    finish_reasons, when given, is one per completion and sent with it (Client.rewards)."""
    if len(completions) != len(groups):
        raise ValueError(f"{len(completions)} completions, {len(groups)} groups")
    by = {}
    for i, (task, reward_fn, options) in enumerate(groups):
        by.setdefault((task, reward_fn, json.dumps(options, sort_keys=True)), []).append(i)
    rewards, valid = [0.0] * len(completions), [True] * len(completions)
    if not by:
        return rewards, valid

    if prompts is not None and len(prompts) != len(completions):
        raise ValueError(f"{len(prompts)} prompts, {len(completions)} completions")
    if finish_reasons is not None and len(finish_reasons) != len(completions):
        raise ValueError(f"{len(finish_reasons)} finish_reasons, {len(completions)} completions")

    def one(key):
        task, reward_fn, options = key
        extra = {} if prompts is None else {"prompts": [prompts[i] for i in by[key]]}
        if finish_reasons is not None:
            extra["finish_reasons"] = [finish_reasons[i] for i in by[key]]
        return client.rewards(completions=[completions[i] for i in by[key]], reward_fn=reward_fn,
                              options=json.loads(options), **task_fields(task), **extra)

    pool = ThreadPoolExecutor(max_workers=max(1, min(max_workers, len(by))))
    try:
        futures = {pool.submit(one, key): key for key in by}
        for f in as_completed(futures):
            key, idx = futures[f], by[futures[f]]
            try:
                resp = f.result()
            except Exception as e:
                if hasattr(e, "add_note"):  # Python 3.11+
                    task = key[0] if "\n" not in key[0] else "an inline reference"
                    e.add_note(f"rewards_by_group: the group of {len(idx)} completions of {task} "
                               f"(reward_fn {key[1]}) failed")
                raise
            for i, r, ok in zip(idx, resp["rewards"], resp.get("valid") or [True] * len(idx)):
                rewards[i] = float(r) if r is not None else 0.0
                valid[i] = r is not None and ok is not False
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
    return rewards, valid


def _json_object(status, raw):
    try:
        body = json.loads(raw)
    except ValueError:
        body = None
    if not isinstance(body, dict):
        raise KernelgateError(status, "bad_response", f"want a JSON object, got {_snippet(raw)}")
    return body


def _read(e):
    try:
        return e.read()
    except (OSError, http.client.HTTPException):
        return b""


def _error_fields(raw):
    try:
        body = json.loads(raw)
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


def _retry_after(headers):
    """Retry-After in seconds, capped; None when absent or an HTTP date (then our backoff)."""
    try:
        seconds = float(headers.get("Retry-After"))
    except (TypeError, ValueError):
        return None
    return min(max(seconds, 0.0), RETRY_AFTER_MAX_S) if not math.isnan(seconds) else None


def _describe(e):
    cause = e.reason if isinstance(e, urllib.error.URLError) else e
    return f"{type(cause).__name__}: {cause}" if isinstance(cause, BaseException) else str(cause)


def _snippet(raw, n=200):
    text = raw.decode(errors="replace") if isinstance(raw, bytes) else str(raw)
    text = " ".join(text.split())
    return repr(text[:n] + ("..." if len(text) > n else ""))
