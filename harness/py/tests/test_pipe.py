"""The judge's private pipe to the zygote (kgharness.pipe): every record kind a judge sends
parses back into its dataclass in one place, a record the zygote used to ignore is still
None (ignored), the zygote has a handler for every kind, and docs/protocol.md names them
all."""

import json
from pathlib import Path

import pytest

from kgharness import pipe, protocol

DOC = Path(__file__).resolve().parents[3] / "docs" / "protocol.md"

SENT = [   # what kgharness.judge.process.PipeContext sends, one of each kind
    ("stage", dict(name="setup", t=12.5)), ("precompiled", {}), ("compiled", {}),
    ("lock", dict(mode="exclusive")), ("unlock", {}), ("reserve", dict(mb=512.0, contexts=True)),
    ("reserve", dict(mb=512.0, later_mb=128.0, host_mb=64.0)), ("reserve", dict(mb=512.0, without_mb=128.0)),
    ("reserve_less", dict(mb=128.0)), ("reserve_more", {}), ("host_ask", dict(shared=True)),
    ("host_ok", dict(mb=700.0)), ("host_mem", dict(mb=710.0)), ("launchers", dict(signatures=[["*fp32"]])),
    ("measured", dict(mb=900.0)), ("share_key", dict(key="abc123")), ("stored", dict(mb=10.0, version=3)),
    ("runner", dict(role="candidate", pid=4242)), ("verdict", dict(nonce="n0", verdict={"status": "correct"})),
]


def line(rec):
    return protocol.encode(rec)[:-1]


@pytest.mark.parametrize("kind,fields", SENT, ids=[f"{k}-{i}" for i, (k, _) in enumerate(SENT)])
def test_a_record_the_judge_sends_parses_back(kind, fields):
    rec = pipe.parse(line(pipe.record(kind, **fields)))
    assert type(rec) is pipe.KINDS[kind] and rec.type == kind
    for name, value in fields.items():
        if name != "mode":
            assert getattr(rec, name) == value, (name, rec)


def test_every_kind_is_sent_somewhere_and_there_are_seventeen():
    assert len(pipe.KINDS) == 17 and {k for k, _ in SENT} == set(pipe.KINDS)


def test_a_judge_cannot_send_a_field_its_kind_lacks():
    with pytest.raises(ValueError, match="no field"):
        pipe.record("reserve", megabytes=1)
    with pytest.raises(KeyError):
        pipe.record("nonsense")


@pytest.mark.parametrize("raw", [
    b"not json", b"[1, 2]", b"42", b'{"type": 7}', b'{"type": ["stage"]}', b'{"type": "unknown"}',
    b'{"name": "setup"}', b'{"type": "stage"}', b'{"type": "stage", "name": 3}',
    b'{"type": "share_key", "key": ""}', b'{"type": "share_key", "key": "a-b"}',
    b'{"type": "share_key", "key": "' + b"k" * 65 + b'"}', b'{"type": "runner", "role": "judge", "pid": 1}',
    b'{"type": "runner", "role": "candidate", "pid": "1"}', b"\xff\xfe",
])
def test_what_the_zygote_ignored_is_still_nothing(raw):
    assert pipe.parse(raw) is None
    assert pipe.parse(protocol.LineReader.TOO_LONG) is None


def test_fields_are_read_as_the_zygote_read_them():
    rec = pipe.parse(b'{"type": "reserve", "mb": "9", "contexts": 1, "later_mb": null, "host_mb": 5}')
    assert (rec.mb, rec.contexts, rec.later_mb, rec.without_mb, rec.host_mb) == (0.0, False, 0.0, 0.0, 5)
    stage = pipe.parse(json.dumps({"type": "stage", "name": "x" * 100, "t": 3}).encode())
    assert stage.name == "x" * 64 and stage.t is None            # t counts only as a float
    assert pipe.parse(b'{"type": "host_ask", "shared": "yes"}').shared is False
    # Sizes only their consumer can judge travel as they came.
    assert pipe.parse(b'{"type": "measured", "mb": "lots"}').mb == "lots"
    v = pipe.parse(b'{"type": "verdict", "verdict": {"status": "correct"}}')
    assert v.nonce is None and v.verdict == {"status": "correct"}


def test_the_zygote_handles_every_kind():
    from kgharness.zygote.records import Records
    assert set(Records(zygote=None).handlers) == set(pipe.KINDS.values())


def test_the_protocol_doc_names_every_kind():
    doc = DOC.read_text().split("### Judge → zygote", 1)[1].split("\n### ", 1)[0]
    missing = [k for k in pipe.KINDS if f'"type":"{k}"' not in doc]
    assert not missing, missing
