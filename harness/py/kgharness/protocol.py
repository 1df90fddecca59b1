"""Records of the Go ⇄ zygote protocol (docs/protocol.md): encode, decode, frame.

One record is one JSON object on one line, carrying "v" (the protocol major
version) and "type". Decoding never raises on bad input from the wire: the
caller gets a ProtocolError carrying the id (when one could be read), which it
turns into an `error` record and keeps serving.
"""

import json
import math
import os

from . import HARNESS_VERSION, PROTOCOL, PROTOCOL_MAJOR

MAJOR = PROTOCOL_MAJOR

# Records Go may send to the zygote, and what each must carry beyond v/type.
INBOUND = {"eval": ("id", "job"), "shutdown": ()}
# Records the zygote sends to Go.
OUTBOUND = ("hello", "started", "result", "error")

# A line longer than this is refused (the largest legal eval is the code limit
# plus a task source; 16 MiB leaves room without letting a peer exhaust memory).
MAX_LINE = 16 << 20


class ProtocolError(Exception):
    def __init__(self, message, id=None):
        super().__init__(message)
        self.message = message
        self.id = id


def record(type_, id=None, **fields):
    """A record with the protocol envelope filled in."""
    rec = {"v": MAJOR, "type": type_}
    if id is not None:
        rec["id"] = id
    rec.update(fields)
    return rec


def hello(pid, python, torch, triton, mode, device, sandbox):
    return record("hello", protocol=PROTOCOL, harness_version=HARNESS_VERSION,
                  pid=pid, python=python, torch=torch, triton=triton,
                  mode=mode, device=device, sandbox=sandbox)


def error(message, id=None):
    return record("error", id=id, message=message)


def _finite(obj):
    """Replace NaN/Inf by None: Go's encoding/json (and strict JSON) refuse them."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {str(k): _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    return obj


def encode(rec):
    """One record as one line of bytes (compact JSON, no NaN, trailing newline)."""
    try:
        text = json.dumps(rec, separators=(",", ":"), allow_nan=False)
    except ValueError:
        text = json.dumps(_finite(rec), separators=(",", ":"), allow_nan=False)
    return text.encode("utf-8") + b"\n"


def decode(line):
    """Parse and check one line; raise ProtocolError when it is not a record we accept."""
    if isinstance(line, bytes):
        try:
            line = line.decode("utf-8")
        except UnicodeDecodeError:
            raise ProtocolError("record is not valid UTF-8") from None
    try:
        rec = json.loads(line)
    except ValueError:
        raise ProtocolError("record is not valid JSON") from None
    if not isinstance(rec, dict):
        raise ProtocolError("record is not a JSON object")
    rid = rec.get("id") if isinstance(rec.get("id"), str) else None
    check_version(rec, rid)
    if not isinstance(rec.get("type"), str):
        raise ProtocolError("record has no type", rid)
    return rec


def check_version(rec, rid=None):
    v = rec.get("v")
    if not isinstance(v, int) or isinstance(v, bool):
        raise ProtocolError("record has no integer protocol version \"v\"", rid)
    if v != MAJOR:
        raise ProtocolError(f"unsupported protocol major version {v} (zygote speaks {MAJOR})", rid)


def decode_inbound(line):
    """A record Go sent to the zygote: eval or shutdown, with its required fields."""
    rec = decode(line)
    rid = rec.get("id") if isinstance(rec.get("id"), str) else None
    need = INBOUND.get(rec["type"])
    if need is None:
        raise ProtocolError(f"unknown record type {rec['type']!r}", rid)
    if rec["type"] == "eval":
        if not rid:
            raise ProtocolError("eval record has no string id")
        job = rec.get("job")
        if not isinstance(job, dict):
            raise ProtocolError("eval record has no job object", rid)
        if job.get("options") is not None and not isinstance(job["options"], dict):
            raise ProtocolError("job.options is not an object", rid)
        if not isinstance(job.get("code"), str):
            raise ProtocolError("job.code is not a string", rid)
    return rec


def write(fd, rec):
    """Write one record, all of it (a pipe may take a long line in several pieces)."""
    data = encode(rec)
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


class LineReader:
    """Splits bytes read from a non-blocking fd into lines, bounded by MAX_LINE.

    feed() returns complete lines; an over-long line becomes the marker
    TOO_LONG (its bytes are dropped up to the next newline).
    """

    TOO_LONG = object()

    def __init__(self, limit=MAX_LINE):
        self.limit = limit
        self.buf = bytearray()
        self.skipping = False

    def feed(self, data):
        out = []
        self.buf += data
        while True:
            nl = self.buf.find(b"\n")
            if nl < 0:
                if len(self.buf) > self.limit:
                    if not self.skipping:
                        out.append(self.TOO_LONG)
                    self.skipping = True
                    self.buf.clear()
                return out
            line = bytes(self.buf[:nl])
            del self.buf[:nl + 1]
            if self.skipping:
                self.skipping = False
                continue
            if len(line) > self.limit:
                out.append(self.TOO_LONG)
            elif line.strip():
                out.append(line)
