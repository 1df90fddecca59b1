"""The judge's private pipe to the zygote (docs/protocol.md, "Judge → zygote"): every
record kind a judge sends, as a dataclass parsed in one place, and the bytes the zygote
answers with on the judge's grant pipe.

A judge sends `record(kind, **fields)`, one JSON object a line; the zygote turns each line
into a record with `parse`. A line that is not a JSON object, a kind this module does not
know, or a record whose fields fail its kind's checks is None: the zygote ignores it, and
the judge's verdict (or its absence) decides. Fields that only their consumer can judge
(a size admission checks against its budget, the launcher signatures the zygote vets, the
verdict itself) travel as they came, typed `object`. The verdict's nonce is checked by the
zygote (kgharness.zygote.records): a record without it is a forged verdict.
"""

import json
from dataclasses import dataclass, fields
from typing import ClassVar

from .protocol import LineReader

ROLES = ("reference", "candidate")

# The grant pipe's first byte (zygote → judge): a grant, the GPU to itself, a timing window
# that a peer zygote did not stop for (kgharness.zygote.gpupeers), a grant without the
# reference's share (owed: `reserve_more` brings it in).
GRANTED, ALONE, SHARED_GPU, OWED = b"\x01", b"\x02", b"\x03", b"\x04"
# The answer to host_ask (kgharness.zygote.refhosts): no host, borrow it in the window,
# load it and use it as the reference runner.
ASK_NONE, ASK_USE, ASK_CREATE = 0, 1, 2


def _number(x):
    """A size the judge sent, else 0.0 (as the zygote always read them)."""
    return x if isinstance(x, (int, float)) else 0.0


class _Record:
    type: ClassVar[str] = ""

    @classmethod
    def from_dict(cls, rec):
        """Every field as it came (None where absent): for kinds whose fields only their
        consumer can judge. Kinds with checks of their own override it."""
        return cls(**{f.name: rec.get(f.name) for f in fields(cls)})


@dataclass(frozen=True)
class Stage(_Record):
    """The stage the judge entered; `setup`'s t (its monotonic clock) times the fork."""
    type: ClassVar[str] = "stage"
    name: str
    t: object = None       # a float, only for the checks below

    @classmethod
    def from_dict(cls, rec):
        if not isinstance(rec.get("name"), str):
            return None
        t = rec.get("t")
        return cls(rec["name"][:64], t if isinstance(t, float) else None)


@dataclass(frozen=True)
class Precompiled(_Record):
    """The candidate's compile-only child is done: answered with GRANTED once it may go on."""
    type: ClassVar[str] = "precompiled"


@dataclass(frozen=True)
class Compiled(_Record):
    """The candidate's first call returned: the compile budget stops counting."""
    type: ClassVar[str] = "compiled"


@dataclass(frozen=True)
class Lock(_Record):
    """Ask for the GPU's timing lock (the judge sends mode "exclusive"; the zygote has no other)."""
    type: ClassVar[str] = "lock"


@dataclass(frozen=True)
class Unlock(_Record):
    type: ClassVar[str] = "unlock"


@dataclass(frozen=True)
class Reserve(_Record):
    """Wait for mb MiB of device memory. contexts: only the runners' CUDA contexts, ahead of
    the rest; later_mb: the reference's share, which may come later (a shared evaluation);
    without_mb: the reference's share, which a reference host holds; host_mb: the same
    share, owed while the inherited host is ready."""
    type: ClassVar[str] = "reserve"
    mb: float = 0.0
    contexts: bool = False
    later_mb: float = 0.0
    without_mb: float = 0.0
    host_mb: float = 0.0

    @classmethod
    def from_dict(cls, rec):
        return cls(_number(rec.get("mb")), rec.get("contexts") is True, _number(rec.get("later_mb")),
                   _number(rec.get("without_mb")), _number(rec.get("host_mb")))


@dataclass(frozen=True)
class ReserveLess(_Record):
    """Give back the reference's share (mb MiB): a host is its reference now."""
    type: ClassVar[str] = "reserve_less"
    mb: float = 0.0

    @classmethod
    def from_dict(cls, rec):
        return cls(_number(rec.get("mb")))


@dataclass(frozen=True)
class ReserveMore(_Record):
    """Bring in the share a grant with OWED left out."""
    type: ClassVar[str] = "reserve_more"


@dataclass(frozen=True)
class HostAsk(_Record):
    """What to do with the inherited reference host (answered with one ASK_* byte)."""
    type: ClassVar[str] = "host_ask"
    shared: bool = False

    @classmethod
    def from_dict(cls, rec):
        return cls(rec.get("shared") is True)


@dataclass(frozen=True)
class HostOk(_Record):
    """The host this evaluation created is sound and holds mb MiB (checked by refhosts)."""
    type: ClassVar[str] = "host_ok"
    mb: object = None


@dataclass(frozen=True)
class HostMem(_Record):
    """The host lent to this evaluation's window held mb MiB (checked by refhosts)."""
    type: ClassVar[str] = "host_mem"
    mb: object = None


@dataclass(frozen=True)
class Launchers(_Record):
    """Launcher signatures the candidate's precompile child named: untrusted, vetted by
    kgharness.runner.launchers."""
    type: ClassVar[str] = "launchers"
    signatures: object = None


@dataclass(frozen=True)
class Measured(_Record):
    """The evaluation used mb MiB of device memory through its trials (checked by admission)."""
    type: ClassVar[str] = "measured"
    mb: object = None


@dataclass(frozen=True)
class ShareKey(_Record):
    """The evaluation's task is key in the shared reference store."""
    type: ClassVar[str] = "share_key"
    key: str = ""

    @classmethod
    def from_dict(cls, rec):
        key = rec.get("key")
        if not (isinstance(key, str) and 0 < len(key) <= 64 and key.isalnum()):
            return None
        return cls(key)


@dataclass(frozen=True)
class Stored(_Record):
    """The shared store holds mb MiB as of its version-th change (checked by admission)."""
    type: ClassVar[str] = "stored"
    mb: object = None
    version: object = None


@dataclass(frozen=True)
class Runner(_Record):
    """A runner the judge forked: its role and pid."""
    type: ClassVar[str] = "runner"
    role: str = ""
    pid: int = 0

    @classmethod
    def from_dict(cls, rec):
        if rec.get("role") not in ROLES or not isinstance(rec.get("pid"), int):
            return None
        return cls(rec["role"], rec["pid"])


@dataclass(frozen=True)
class Verdict(_Record):
    """The judge's verdict, with the nonce the zygote gave it at fork."""
    type: ClassVar[str] = "verdict"
    nonce: object = None
    verdict: object = None


KINDS = {cls.type: cls for cls in (Stage, Precompiled, Compiled, Lock, Unlock, Reserve, ReserveLess, ReserveMore,
                                   HostAsk, HostOk, HostMem, Launchers, Measured, ShareKey, Stored, Runner,
                                   Verdict)}
# Fields a judge sends that the zygote does not read.
_SENT_ONLY = {"lock": ("mode",)}


def record(kind, **values):
    """The dict a judge sends for one record of `kind` (fields as given, none added)."""
    allowed = {f.name for f in fields(KINDS[kind])} | set(_SENT_ONLY.get(kind, ()))
    unknown = set(values) - allowed
    if unknown:
        raise ValueError(f"pipe.record: {kind} has no field {sorted(unknown)[0]!r}")
    return {"type": kind, **values}


def parse(line):
    """One line from a judge's pipe as a record, or None where it is none (see above)."""
    if line is LineReader.TOO_LONG:
        return None
    try:
        rec = json.loads(line)
    except ValueError:
        return None
    if not isinstance(rec, dict):
        return None
    kind = rec.get("type")
    cls = KINDS.get(kind) if isinstance(kind, str) else None
    return cls.from_dict(rec) if cls is not None else None
