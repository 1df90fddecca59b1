"""The Python side of docs/protocol.md against the shared golden records."""

import json
import math
from pathlib import Path

import pytest

from kgharness import PROTOCOL, PROTOCOL_MAJOR, protocol

GOLDEN = Path(__file__).resolve().parents[2] / "testdata" / "protocol"
FIXTURES = sorted(GOLDEN.glob("*.json"))


def test_fixtures_exist():
    names = {p.stem for p in FIXTURES}
    assert {"hello", "eval", "eval.task_check", "started", "result", "error", "shutdown"} <= names


def _type_of(path):
    """eval.json and eval.task_check.json both hold an eval: the name up to the first dot."""
    return path.name.split(".")[0]


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.stem)
def test_golden_round_trip(path):
    raw = path.read_text().strip()
    rec = protocol.decode(raw)
    assert rec["v"] == protocol.MAJOR == PROTOCOL_MAJOR
    assert rec["type"] == _type_of(path)
    line = protocol.encode(rec)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert json.loads(line) == json.loads(raw)
    assert line.decode().strip() == raw        # compact, same key order: byte-identical


@pytest.mark.parametrize("name", ["eval", "eval.task_check", "shutdown"])
def test_golden_inbound_accepted(name):
    rec = protocol.decode_inbound((GOLDEN / f"{name}.json").read_bytes())
    assert rec["type"] == name.split(".")[0]


def test_golden_task_check_flag():
    plain = protocol.decode_inbound((GOLDEN / "eval.json").read_bytes())
    check = protocol.decode_inbound((GOLDEN / "eval.task_check.json").read_bytes())
    assert "task_check" not in plain["job"]          # Go omits it when false
    assert check["job"]["task_check"] is True and check["job"]["code"] == ""
    assert "check" not in plain["job"]
    # the same defaults as the evaluator's, so Go sending them changes nothing
    from kgharness.judge.taskcheck import CHECK_DEFAULTS
    assert check["job"]["check"] == dict(CHECK_DEFAULTS, depth="auto")


def test_builders_match_golden():
    hello = json.loads((GOLDEN / "hello.json").read_text())
    built = protocol.hello(hello["pid"], hello["python"], hello["torch"], hello["triton"],
                           hello["mode"], hello["device"], hello["sandbox"])
    assert built == hello and built["protocol"] == PROTOCOL
    err = json.loads((GOLDEN / "error.json").read_text())
    assert protocol.error(err["message"], err["id"]) == err
    started = json.loads((GOLDEN / "started.json").read_text())
    assert protocol.record("started", started["id"], pid=started["pid"]) == started


@pytest.mark.parametrize("line,msg,rid", [
    (b"not json", "not valid JSON", None),
    (b"\xff\xfe", "UTF-8", None),
    (b"[1,2]", "not a JSON object", None),
    (b'{"type":"eval","id":"a"}', "version", "a"),
    (b'{"v":"1","type":"shutdown"}', "version", None),
    (b'{"v":true,"type":"shutdown"}', "version", None),
    (b'{"v":2,"type":"eval","id":"j9","job":{}}', "major version 2", "j9"),
    (b'{"v":1,"type":"frobnicate","id":"x"}', "unknown record type", "x"),
    (b'{"v":1,"type":"eval","job":{"code":""}}', "no string id", None),
    (b'{"v":1,"type":"eval","id":"j","job":[]}', "no job object", "j"),
    (b'{"v":1,"type":"eval","id":"j","job":{"code":1}}', "job.code", "j"),
    (b'{"v":1,"type":"eval","id":"j","job":{"code":"","options":3}}', "options", "j"),
])
def test_bad_inbound_lines_raise_protocol_error(line, msg, rid):
    with pytest.raises(protocol.ProtocolError) as e:
        protocol.decode_inbound(line)
    assert msg in e.value.message
    assert e.value.id == rid
    err = protocol.error(e.value.message, e.value.id)
    assert protocol.decode(protocol.encode(err))["type"] == "error"


def test_unknown_fields_are_kept_and_ignored():
    rec = protocol.decode_inbound(b'{"v":1,"type":"shutdown","future_field":{"x":1}}')
    assert rec["future_field"] == {"x": 1}


def test_non_finite_floats_become_null():
    line = protocol.encode(protocol.record("result", "j", verdict={"max_abs_error": math.nan,
                                                                  "speedup": math.inf, "ok": 1.5}))
    assert json.loads(line)["verdict"] == {"max_abs_error": None, "speedup": None, "ok": 1.5}


def test_line_reader_splits_and_bounds():
    r = protocol.LineReader(limit=16)
    assert r.feed(b'{"a":1}\n{"b"') == [b'{"a":1}']
    assert r.feed(b":2}\n\n") == [b'{"b":2}']
    out = r.feed(b"x" * 40)                  # over the limit without a newline
    assert out == [protocol.LineReader.TOO_LONG]
    assert r.feed(b"yyyy\nok\n") == [b"ok"]  # the rest of the long line is dropped
    assert r.feed(b"z" * 20 + b"\n") == [protocol.LineReader.TOO_LONG]


def test_write_whole_record(tmp_path):
    import os
    r, w = os.pipe()
    try:
        protocol.write(w, protocol.record("started", "j", pid=1))
        assert os.read(r, 1000) == b'{"v":1,"type":"started","id":"j","pid":1}\n'
    finally:
        os.close(r)
        os.close(w)


def test_vocabulary_matches_go():
    """Statuses and hack flags: one list, held by both sides (harness/testdata/vocabulary.json)."""
    from kgharness.verdict import FLAGS, STATUSES
    vocab = json.loads((Path(__file__).resolve().parents[2] / "testdata" / "vocabulary.json").read_text())
    assert vocab == {"statuses": list(STATUSES), "hack_flags": list(FLAGS)}
