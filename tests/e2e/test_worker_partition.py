"""A worker cut off from the network: it runs in a network namespace
joined to the gateway's host by a veth pair, and the link is dropped while it evaluates.
Its job goes to another worker within the job AckWait and is logged once; when the link
comes back, the cut-off worker takes jobs again. Needs root and `ip netns` (CI has both):
without them the test fails, it does not skip."""
import os
import re
import signal
import subprocess
import time

from conftest import BIN, Serve, free_port
from test_remote_workers import KERNEL, SLOW, TASK, eval_rows, post_async, start_worker, stop, wait_log, wait_ready

ACK = ["--job-ack-wait", "2s", "--log-level", "debug"]


def ip(*args, ns=None):
    cmd = ["ip", "netns", "exec", ns, "ip", *args] if ns else ["ip", *args]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    assert p.returncode == 0, f"{' '.join(cmd)}: {p.stderr.strip()} (this test needs root and ip netns)"


class Link:
    """A network namespace and the veth pair that joins it to this host."""

    def __init__(self):
        n = os.getpid() % 250 + 1
        self.ns, self.host_if, self.ns_if = f"kgpart{n}", f"kgh{n}", f"kgn{n}"
        self.host_ip, self.ns_ip = f"10.213.{n}.1", f"10.213.{n}.2"

    def __enter__(self):
        subprocess.run(["ip", "netns", "del", self.ns], capture_output=True)   # a leftover of a killed run
        subprocess.run(["ip", "link", "del", self.host_if], capture_output=True)
        ip("netns", "add", self.ns)
        ip("link", "add", self.host_if, "type", "veth", "peer", "name", self.ns_if)
        ip("link", "set", self.ns_if, "netns", self.ns)
        ip("addr", "add", f"{self.host_ip}/30", "dev", self.host_if)
        ip("link", "set", self.host_if, "up")
        ip("addr", "add", f"{self.ns_ip}/30", "dev", self.ns_if, ns=self.ns)
        ip("link", "set", self.ns_if, "up", ns=self.ns)
        ip("link", "set", "lo", "up", ns=self.ns)
        return self

    def up(self, on):
        ip("link", "set", self.host_if, "up" if on else "down")

    def __exit__(self, *exc):
        subprocess.run(["ip", "netns", "del", self.ns], capture_output=True)
        subprocess.run(["ip", "link", "del", self.host_if], capture_output=True)


def start_worker_in(link, tmp_path, nats, name, env):
    log = open(tmp_path / f"{name}.log", "wb")
    return subprocess.Popen(["ip", "netns", "exec", link.ns, str(BIN), "worker", "--nats", nats, *ACK],
                            env={**os.environ, "KERNELGATE_CONCURRENCY": "2", **env},
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)


def test_a_worker_cut_off_mid_job_is_replaced_and_rejoins(tmp_path):
    port = free_port()
    token = tmp_path / "token"
    token.write_text("partition-token\n")
    env = {"KERNELGATE_NATS_TOKEN": "partition-token"}
    with Link() as link:
        nats = f"nats://{link.host_ip}:{port}"
        srv = Serve(tmp_path / "data", tmp_path, args=["--nats-listen", f"{link.host_ip}:{port}", "--workers", "0",
                                                       "--nats-token-file", str(token)])
        srv.start(ready_path="/healthz")
        a = start_worker_in(link, tmp_path, nats, "worker-a", env)
        b = None
        try:
            wait_ready(srv)
            t, out = post_async(srv, {"reference": TASK, "codes": [SLOW.replace("SECONDS", "0.8")], "wait_s": 300})
            wait_log(tmp_path / "worker-a.log", "evaluating")
            link.up(False)                           # mid-evaluation: the worker's host is gone
            b = start_worker(tmp_path, nats, "worker-b", env, extra=ACK)
            t.join(120)
            assert not t.is_alive(), "the batch was not answered while its worker was cut off"
            status, resp = out["resp"]
            assert status == 200 and resp["results"][0]["status"] == "correct", resp
            # The same job, delivered again (the server may first have sent it to the cut-off
            # worker's pull request a second time: delivery 3).
            got = re.findall(rf"evaluating .*job={resp['batch_id']}-00000 .*delivery=(\d+)",
                             (tmp_path / "worker-b.log").read_text())
            assert got and int(got[0]) >= 2, got
            assert a.poll() is None, "the cut-off worker exited"

            link.up(True)                            # it comes back: it takes jobs again
            assert stop(b) == 0
            b = None
            time.sleep(1.0)
            status, again = srv.post("/v1/rewards", {"reference": TASK, "codes": [KERNEL + "\n# after the cut\n"],
                                                     "wait_s": 120}, timeout_s=150)
            assert status == 200 and again["results"][0]["status"] == "correct", again
            wait_log(tmp_path / "worker-a.log", f"job={again['batch_id']}-00000", timeout_s=30)
            assert stop(a) == 0
            a = None
        finally:
            for w in (a, b):
                if w is not None and w.poll() is None:
                    os.killpg(w.pid, signal.SIGKILL)
            assert srv.stop() == 0, srv.log()
    rows = [r["eval_id"] for r in eval_rows(srv.data)]
    for batch in (resp["batch_id"], again["batch_id"]):
        assert [r for r in rows if r.startswith(batch)] == [f"{batch}-00000"], rows   # each logged once
