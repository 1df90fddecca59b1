"""schemathesis hooks for test_schemathesis.py: positive cases are brought in line with the
cross-field rules openapi.yaml states in prose, which JSON Schema cannot express ("one
prompt per item", "max_iters at least min_iters"), so that a schema-valid request the
gateway refuses is a finding and not a known limit of the schema. Negative cases, and
every check, are schemathesis's own."""

import uuid

import schemathesis
from schemathesis import GenerationMode

# harness.DefaultOptions: what an omitted min_iters or max_iters is.
MIN_ITERS, MAX_ITERS = 5, 500


def fit(body, key, n, filler):
    """body[key], when given, gets exactly n entries: cut, or padded with its last (or filler)."""
    items = body.get(key)
    if isinstance(items, list):
        pad = items[-1] if items else filler
        body[key] = (items + [pad] * n)[:n]


@schemathesis.hook
def before_call(ctx, case, **kwargs):
    """Runs on every case of every phase just before it is sent (map_case misses the
    coverage phase's)."""
    meta = getattr(case, "meta", None)
    if meta is None or meta.generation.mode != GenerationMode.POSITIVE:
        return
    if case.headers and "Idempotency-Key" in case.headers:
        # A key names one request: the same key with another body is 422
        # idempotency_key_reused by design, and generated keys repeat ("0").
        case.headers["Idempotency-Key"] = "st-" + uuid.uuid4().hex
    if not isinstance(case.body, dict):
        return
    body = case.body
    opts = body.get("options")
    if isinstance(opts, dict) and isinstance(opts.get("requires"), dict):
        # A valid requirement that no worker here meets is 503 not_ready by design (a GPU
        # model on a CPU-only server): the one documented 503 of a configured feature.
        opts["requires"] = {}
    if isinstance(opts, dict):
        lo, hi = opts.get("min_iters", MIN_ITERS), opts.get("max_iters", MAX_ITERS)
        if hi < lo:
            opts["min_iters"], opts["max_iters"] = hi, lo
    label = case.operation.label
    if label == "POST /v1/rewards":
        fit(body, "prompts", len(body.get("completions") or body.get("codes") or []), "p")
        # One finish reason per completion, and none with codes (a 400 by design: codes
        # were not written by a model here).
        if "codes" in body or not body.get("completions"):
            body.pop("finish_reasons", None)
        else:
            fit(body, "finish_reasons", len(body["completions"]), None)
    elif label == "POST /openrlhf/reward":
        n = len(body.get("query") or [])
        fit(body, "labels", n, "ci/1_add_relu")
        fit(body, "prompts", n, "")
        query = case.query if isinstance(case.query, dict) else {}
        for k in ("reward_fn", "invalid_reward", "group_size", "group_wait_s", "deadline_s"):
            if k in query and k in body:
                body[k] = query[k]  # the URL's and the body's must agree
        if "group_size" in query or "group_size" in body:
            # A group of one, which each sample fills: a group that does not fill holds its
            # answers group_wait_s (by design), past the fuzzer's request timeout.
            for where in (query, body):
                if "group_size" in where:
                    where["group_size"] = 1
        else:
            query.pop("group_wait_s", None)  # needs group_size
            body.pop("group_wait_s", None)
