"""The judge's handle on the reference host it inherited (kgharness.zygote.refhosts says
what a host is and when a judge creates, borrows or ignores it)."""

import os
import random
import socket
import time

from .. import channel
from ..runner import spawn

HELLO_TIMEOUT_S = 30.0    # a borrower's wait for the host to finish what an earlier one left


class HostProc(spawn.RunnerProc):
    """The judge's handle on the host it inherited: the reference runner's requests; not
    its child, so it is never waited for or killed from here."""

    def __init__(self, fd, pid):
        super().__init__("reference", pid, channel.Channel(socket.socket(fileno=fd)), None)
        # Its replies to an earlier borrower's requests carry other sequence numbers.
        self.chan.seq = random.SystemRandom().randrange(1 << 40)

    def hello(self, timeout=HELLO_TIMEOUT_S):
        """Start talking: what an earlier borrower left unanswered is read and dropped,
        until the answer to this hello comes. Raises ChannelClosed, Malformed, TimeoutError."""
        nonce = os.urandom(8).hex()
        seq = self.chan.request("hello", nonce=nonce)
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("the reference host did not answer hello")
            rec, fds = self.chan.recv(left)
            channel.close_all(fds)
            if rec.get("op") == "hello" and rec.get("seq") == seq and rec.get("nonce") == nonce:
                return rec

    def gone(self):
        return spawn.RunnerGone(self.role, None, "(a reference host) closed its channel")

    def _wait(self):
        return 0, None

    def kill(self):
        try:
            self.chan.sock.close()
        except OSError:
            pass
