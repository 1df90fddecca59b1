"""One `--data` directory, one kernelgate: a second `serve` on it is refused at once,
naming the process that holds it (two writers on one store corrupt it); a busy port
is the one error, with no "serving on" line before it."""

import socket
import subprocess

from conftest import BIN


def test_a_second_serve_on_the_same_data_is_refused(serve):
    s = serve.start()
    r = subprocess.run([str(BIN), "serve", "--addr", "127.0.0.1:0", "--data", str(s.data)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 and "in use by another kernelgate process (pid" in r.stderr, r.stderr
    assert "serving on" not in r.stderr, r.stderr
    assert s.get("/healthz")[0] == 200   # the first one serves on
    assert s.stop() == 0, s.log()


def test_a_busy_port_is_the_one_error(tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        r = subprocess.run([str(BIN), "serve", "--addr", f"127.0.0.1:{port}", "--data", str(tmp_path / "data")],
                           capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and "address already in use" in r.stderr, r.stderr
    assert "serving on" not in r.stderr, r.stderr
