"""kgharness.options holds Go's option defaults, not a copy of its own: SENT is what Go
sends by default (the golden eval record, which Go's TestGoldenEvalUsesDefaults holds to
eval.DefaultOptions), OMITTED the fields Go leaves out at their default (`omitempty` in
eval/options.go), with the defaults docs/protocol.md gives them."""

import json
import re
from pathlib import Path

import pytest

from kgharness import options

REPO = Path(__file__).resolve().parents[3]
GO_OPTIONS = REPO / "eval" / "options.go"
GOLDEN = REPO / "harness" / "testdata" / "protocol" / "eval.json"
DOC = REPO / "docs" / "protocol.md"
GO_ONLY = {"requires"}      # routing, read by Go alone (dispatch/route.go)


def go_fields():
    """{json name: omitempty?} for every field of eval.Options."""
    src = GO_OPTIONS.read_text()
    body = src[src.index("type Options struct {"):]
    body = body[:body.index("\n}\n")]
    out = {}
    for name, flags in re.findall(r'`json:"([a-z_0-9]+)((?:,[a-z]+)*)"`', body):
        out[name] = "omitempty" in flags
    return out


def documented_defaults():
    """{field: the default in brackets} from docs/protocol.md's Job options table."""
    section = DOC.read_text().split("### Job options", 1)[1].split("\n### ", 1)[0]
    out = {}
    for row in section.splitlines():
        for name, default in re.findall(r"`([a-z_0-9]+)` \[([^\]]*)\]", row):
            out[name] = default
    return out


def test_sent_is_what_go_sends_by_default():
    sent = json.loads(GOLDEN.read_text())["job"]["options"]
    assert options.SENT == sent


def test_omitted_are_exactly_gos_omitempty_options():
    fields = go_fields()
    assert len(fields) >= 17, fields
    assert set(options.OMITTED) == {k for k, omit in fields.items() if omit} - GO_ONLY
    assert set(options.SENT) == {k for k, omit in fields.items() if not omit}


@pytest.mark.parametrize("name", sorted(options.OMITTED))
def test_an_omitted_options_default_is_the_documented_one(name):
    doc = documented_defaults()[name]
    want = {"true": True, "false": False}.get(doc, doc.split(":")[0])
    assert str(options.OMITTED[name]).lower() == str(want).lower(), (name, doc)


def test_the_documented_defaults_of_what_go_sends_are_gos():
    doc = documented_defaults()
    assert set(options.SENT) - {"atol", "rtol"} <= set(doc), sorted(set(options.SENT) - set(doc))
    for name, value in options.SENT.items():
        if name in ("atol", "rtol"):         # none: the task's, else by dtype
            continue
        first = doc[name].split(",")[0].split(":")[0].strip()
        assert str(value).lower() == first.lower(), (name, value, doc[name])


def test_gos_options_and_no_options_read_the_same():
    """Go sends every option; a job from a test or a script may send none: the judge, the
    zygote and the runners read the same values from either."""
    sent = json.loads(GOLDEN.read_text())["job"]["options"]
    for raw in (sent, {}, None):
        assert options.parse(raw) == options.parse(sent)
        assert (options.timeout_s(raw), options.memory_limit_bytes(raw), options.output_limit_bytes(raw),
                options.seed(raw), options.gpu_memory_fraction(raw)) == (120.0, 32768 << 20, 1 << 20, 0, 0.25)
    assert options.parse(sent) == {**{k: sent[k] for k in options.JUDGE_KEYS if k in sent},
                                   "timing_budget_ms": 50.0, "require_triton": True, "cpu_timing": False}


def test_the_judge_reads_options_as_it_did():
    got = options.parse({"seeds": 500, "seed": "3", "timing_budget_ms": 20, "atol": None, "cpu_timing": True,
                         "unknown": 1})
    assert got["seeds"] == 100 and got["seed"] == 3 and got["timing_budget_ms"] == 20.0
    assert got["atol"] is None and got["cpu_timing"] is True and "unknown" not in got
    assert options.parse({"seeds": 0})["seeds"] == 1
    assert options.timeout_s({"timeout_s": True}) == 120.0 and options.timeout_s({"timeout_s": 7}) == 7.0
    assert options.output_limit_bytes({"output_limit_bytes": 0}) == 1 << 20
