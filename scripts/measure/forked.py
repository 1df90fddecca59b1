"""Run one measurement in a fresh forked child and get its JSON-able result back.

The probes in scripts/ fork after importing torch and triton, CUDA uninitialised, as the
zygote does, so each measurement starts from what an evaluation starts from.
"""
import json
import os


def in_child(fn, *args):
    """fn(*args) in a forked child: its dict result, or {"error": ...} if it raised or died."""
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(rfd)
        try:
            out = fn(*args)
        except Exception as e:  # one failing measurement must not stop the table
            out = {"error": repr(e)[:200]}
        os.write(wfd, json.dumps(out).encode())
        os._exit(0)
    os.close(wfd)
    data = b""
    while chunk := os.read(rfd, 65536):
        data += chunk
    os.waitpid(pid, 0)
    return json.loads(data or b'{"error": "no output"}')
