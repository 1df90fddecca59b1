"""The judge's private channel to one runner: one JSON object per SOCK_SEQPACKET message.

A runner (the process that runs task or candidate code) is hostile: everything it
sends is read with a size limit, parsed as plain JSON, and checked by the caller.
Message boundaries come from the socket type, so a runner cannot split, join or
interleave records; file descriptors (CPU exchange buffers) travel as SCM_RIGHTS
with the message that names them. A runner may send `taint` messages at any time
(a detector's finding, sent before the candidate gets what it asked for); `Channel.reply`
collects them and returns the one reply to its request.
"""

import array
import json
import math
import os
import select
import socket
import time

from . import protocol

MAX_MESSAGE = 1 << 20      # a reply larger than this is malformed
MAX_FDS = 8
SOCK_BUF = 4 << 20


class ChannelClosed(Exception):
    """The peer closed its end (it exited or died)."""


class Malformed(Exception):
    """The peer sent something that is not a well-formed reply: its own verdict, at once."""


def pair():
    """(judge_end, runner_end) socket objects."""
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    for s in (a, b):
        for opt in (socket.SO_SNDBUF, socket.SO_RCVBUF):
            try:
                s.setsockopt(socket.SOL_SOCKET, opt, SOCK_BUF)
            except OSError:
                pass
    return a, b


def encode(rec):
    """One message: compact JSON, NaN and Inf as null (the protocol's own encoder, unframed)."""
    return protocol.encode(rec)[:-1]


class Channel:
    def __init__(self, sock):
        self.sock = sock
        self.seq = 0
        self.taints = []           # (flag, detail) streamed by the peer
        self.closed = False

    def fileno(self):
        return self.sock.fileno()

    def send(self, rec, fds=()):
        data = encode(rec)
        try:
            if fds:
                self.sock.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))])
            else:
                self.sock.send(data)
        except (BrokenPipeError, ConnectionResetError) as e:
            self.closed = True
            raise ChannelClosed(str(e)) from None

    def recv(self, timeout=None):
        """One message: (dict, [fds]). Raises ChannelClosed, Malformed, TimeoutError."""
        if timeout is not None:
            r, _, _ = select.select([self.sock], [], [], max(0.0, timeout))
            if not r:
                raise TimeoutError("no message in time")
        fds = array.array("i")
        try:
            data, anc, flags, _ = self.sock.recvmsg(MAX_MESSAGE + 1, socket.CMSG_SPACE(MAX_FDS * fds.itemsize))
        except OSError as e:
            self.closed = True
            raise ChannelClosed(str(e)) from None
        for level, kind, payload in anc:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds.frombytes(payload[:len(payload) - len(payload) % fds.itemsize])
        if not data and not anc:
            self.closed = True
            raise ChannelClosed("peer closed the channel")
        if flags & (socket.MSG_TRUNC | socket.MSG_CTRUNC) or len(data) > MAX_MESSAGE:
            close_all(fds)
            raise Malformed(f"a message over {MAX_MESSAGE} bytes")
        try:
            rec = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            close_all(fds)
            raise Malformed("a message that is not JSON") from None
        if not isinstance(rec, dict):
            close_all(fds)
            raise Malformed("a message that is not a JSON object")
        return rec, list(fds)

    def request(self, op, fds=(), **fields):
        """Send a request; returns its sequence number for `reply`."""
        self.seq += 1
        self.send(dict(fields, op=op, seq=self.seq), fds)
        return self.seq

    def reply(self, op, seq, deadline=None, fds_out=None):
        """The reply to request `seq` (taints that arrive first are collected). File
        descriptors that come with it are closed, or appended to fds_out when given."""
        while True:
            timeout = None if deadline is None else deadline - time.monotonic()
            if timeout is not None and timeout <= 0:
                raise TimeoutError(f"no reply to {op}")
            rec, got = self.recv(timeout)
            if rec.get("op") == "taint":
                close_all(got)
                flag, detail = rec.get("flag"), rec.get("detail")
                if isinstance(flag, str) and len(self.taints) < 64:
                    self.taints.append((flag[:64], str(detail)[:200]))
                continue
            if rec.get("op") != op or rec.get("seq") != seq:
                close_all(got)
                raise Malformed(f"expected the reply to {op} #{seq}, got {str(rec.get('op'))[:32]!r} "
                                f"#{str(rec.get('seq'))[:16]}")
            if fds_out is None:
                close_all(got)
            else:
                fds_out.extend(got)
            return rec


def close_all(fds):
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass


class RunnerEnd:
    """The runner's side: receive a request (with fds), reply to it, stream taints."""

    def __init__(self, sock):
        self.sock = sock

    def recv(self):
        fds = array.array("i")
        data, anc, _flags, _ = self.sock.recvmsg(MAX_MESSAGE, socket.CMSG_SPACE(MAX_FDS * fds.itemsize))
        if not data:
            raise ChannelClosed("the judge closed the channel")
        for level, kind, payload in anc:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds.frombytes(payload[:len(payload) - len(payload) % fds.itemsize])
        return json.loads(data.decode("utf-8")), list(fds)

    def reply(self, req, **fields):
        self.sock.send(encode(dict(fields, op=req["op"], seq=req["seq"])))

    def taint(self, flag, detail):
        try:
            self.sock.send(encode({"op": "taint", "flag": str(flag), "detail": str(detail)[:200]}))
        except OSError:
            pass


# Values read from a runner's reply: claims of a hostile process, taken only when sane.

def reported_ms(x):
    """A runner's report of its own time, for stage_ms (0 when it is not a number)."""
    return round(float(x), 3) if isinstance(x, (int, float)) and not isinstance(x, bool) else 0.0


def held_count(x):
    """A runner's count of held-out input sets, when it is a sane one."""
    return x if isinstance(x, int) and not isinstance(x, bool) and 0 <= x <= 64 else 0


def reported_float(x):
    """A finite number a runner reports, else None (a verdict holds no NaN or Inf)."""
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) else None


def reported_index(x):
    """A non-negative int a runner reports (an output's number), else None."""
    return x if isinstance(x, int) and not isinstance(x, bool) and x >= 0 else None


def reported_position(x):
    """An element's index a runner reports (at most 16 dimensions), else None."""
    ok = isinstance(x, list) and len(x) <= 16 and all(reported_index(i) is not None for i in x)
    return x if ok else None
