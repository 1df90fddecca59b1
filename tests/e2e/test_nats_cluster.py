"""A gateway and workers on a 3-node NATS JetStream cluster: three nats-server
nodes (tests/natsnode, the nats-server module kernelgate embeds) on loopback, `kernelgate
serve --nats URL,URL,URL --workers 0` and two `kernelgate worker --nats ...`. Streams and
buckets get three replicas; a reward batch is answered by the workers; with one node
killed, the next batch is answered too, and every evaluation of both is in the Parquet
log exactly once. The node killed leads the job queue or its consumer."""
import json
import os
import signal
import subprocess
import time
import urllib.error
import urllib.request


from conftest import BIN, REPO, Serve, free_port, logged_rows

TASK = (REPO / "datasets" / "ci" / "1_add_relu.py").read_text()
KERNEL = (REPO / "datasets" / "solutions" / "ci" / "1_add_relu.py").read_text()


def start_cluster(tmp_path):
    node = tmp_path / "natsnode"
    subprocess.run(["go", "build", "-o", str(node), "./tests/natsnode"], cwd=REPO, check=True, timeout=600)
    ports = [(free_port(), free_port(), free_port()) for _ in range(3)]
    procs = []
    for i, (client, route, http) in enumerate(ports):
        routes = ",".join(f"nats://127.0.0.1:{r}" for j, (_, r, _) in enumerate(ports) if j != i)
        log = open(tmp_path / f"nats-{i}.log", "wb")
        procs.append(subprocess.Popen([str(node), "-name", f"n{i}", "-port", str(client), "-cluster", str(route),
                                       "-http", str(http), "-routes", routes, "-store", str(tmp_path / f"js{i}")],
                                      stdout=log, stderr=subprocess.STDOUT, start_new_session=True))
    deadline = time.monotonic() + 90
    pending = {i: http for i, (_, _, http) in enumerate(ports)}
    health = {}
    while pending and time.monotonic() < deadline and all(p.poll() is None for p in procs):
        for i, http in list(pending.items()):
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{http}/healthz", timeout=2) as r:
                    if r.status == 200:
                        del pending[i]
            except urllib.error.HTTPError as e:
                health[i] = e.read().decode(errors="replace")[:300]
            except OSError as e:
                health[i] = str(e)
        time.sleep(0.3)
    if pending or any(p.poll() is not None for p in procs):
        for p in procs:
            if p.poll() is None:
                p.kill()
        report = [f"node n{i} (exit {p.poll()}, last /healthz: {health.get(i)}):\n"
                  + (tmp_path / f"nats-{i}.log").read_text(errors="replace")[-1500:] for i, p in enumerate(procs)]
        raise AssertionError("the cluster's JetStream never became healthy:\n" + "\n".join(report))
    return procs, ",".join(f"nats://127.0.0.1:{c}" for c, _, _ in ports), [h for _, _, h in ports]


def queue_leaders(http_ports, consumer="eval-workers-cpu"):
    """The nodes that lead the JOBS stream or the consumer this test's jobs go through
    (from /jsz on any node). Workers hold a consumer per subject they pull (interactive
    and bulk, one per environment requirement: dispatch/route.go), whose leaders cover
    every node; the others carry no job here."""
    for http in http_ports:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{http}/jsz?streams=true&consumers=true", timeout=2) as r:
                jsz = json.load(r)
        except OSError:
            continue
        leaders = {}
        for acc in jsz.get("account_details") or []:
            for st in acc.get("stream_detail") or []:
                if st.get("name") != "JOBS":
                    continue
                leaders["JOBS"] = (st.get("cluster") or {}).get("leader")
                for c in st.get("consumer_detail") or []:
                    if c.get("name") == consumer:
                        leaders[consumer] = (c.get("cluster") or {}).get("leader")
        if len(leaders) == 2 and all(leaders.values()):
            return {int(name[1:]) for name in leaders.values()}
        time.sleep(0.3)
    raise AssertionError(f"no node leads JOBS and {consumer}")


def rows(data):
    return [r["eval_id"] for r in logged_rows(data, "evaluations", ["eval_id"])]


def batch(srv, tag, n=3):
    codes = [KERNEL + f"\n# {tag} {i}\n" for i in range(n)]
    body = {"reference": TASK, "codes": codes, "wait_s": 300}
    key = {"Idempotency-Key": f"nats-cluster-{tag}-{time.time_ns()}"}
    # While the cluster elects the lost node's leaders the queue may not answer: the gateway
    # says 503 with Retry-After, and a client sends the same request again, as the Python
    # client does (the key makes a repeat safe). A few of those, not a stall.
    for _ in range(10):
        status, resp = srv.post("/v1/rewards", body, timeout_s=320, headers=key)
        if status != 503:
            break
        time.sleep(min(float(srv.last_headers.get("Retry-After") or 1), 5))
    assert status == 200, resp
    assert [r["status"] for r in resp["results"]] == ["correct"] * n, resp
    return {f"{resp['batch_id']}-{i:05d}" for i in range(n)}


def test_a_gateway_and_two_workers_on_a_three_node_cluster_survive_losing_a_node(tmp_path):
    nodes, urls, http_ports = start_cluster(tmp_path)
    srv = Serve(tmp_path / "data", tmp_path, args=["--nats", urls, "--workers", "0", "--log-level", "info"])
    workers = []
    try:
        srv.start(ready_path="/healthz")
        for k in range(2):
            log = open(tmp_path / f"worker-{k}.log", "wb")
            workers.append(subprocess.Popen([str(BIN), "worker", "--nats", urls, "--job-ack-wait", "3s"],
                                            env={**os.environ, "KERNELGATE_CONCURRENCY": "1"},
                                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True))
        deadline = time.monotonic() + 120
        while srv.get("/readyz")[0] != 200:
            assert time.monotonic() < deadline, srv.log()
            time.sleep(0.3)
        # The whole log: srv.log() keeps the last 3000 characters, which the readyz polls
        # fill while the workers' zygotes start on a busy machine.
        assert "replicas=3" in (tmp_path / "serve-1.log").read_text(), srv.log()
        want = batch(srv, "before")
        # The node that leads the job queue or its consumer: the hardest one to lose.
        # It stalled 5 of 31 runs until the gateway kept its workers through a failed
        # read of their announcements (the bucket's leader died with the node): the
        # timing mode went unknown and the next jobs were queued for GPU workers.
        victim = min(queue_leaders(http_ports))
        nodes[victim].send_signal(signal.SIGKILL)     # one of three: a quorum remains
        nodes[victim].wait()
        want |= batch(srv, "after")
        assert all(w.poll() is None for w in workers), "a worker exited when a node died"
    finally:
        for w in workers:
            if w.poll() is None:
                w.send_signal(signal.SIGTERM)
        for w in workers:
            try:
                w.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(w.pid, signal.SIGKILL)
        code = srv.stop()
        for n in nodes:
            if n.poll() is None:
                n.send_signal(signal.SIGTERM)
                n.wait(30)
    assert code == 0, srv.log()
    logged = rows(srv.data)
    assert sorted(i for i in logged if i in want) == sorted(want), (sorted(want), sorted(logged))
