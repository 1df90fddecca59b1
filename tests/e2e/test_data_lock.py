"""One `--data` directory, one kernelgate: a second `serve` on it is refused at once,
naming the process that holds it (two writers on one store corrupt it)."""

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
