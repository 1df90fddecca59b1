"""A soak of `kernelgate serve`: DURATION of mixed load on loopback,
every loop bounded (one request in flight per loop, a pause between), while the server's
RSS, open files and goroutines (its /metrics) and its process tree's RSS (the zygote, the
judge service, the evaluations) are sampled. Reports each figure after warm-up against
the end: a leak shows as growth between the two windows.

Loops: reward batches (a correct and a broken kernel, cache off), reads (batch, metrics,
tasks, readiness, GPUs), bad input (malformed JSON, a form body, duplicate keys, an
unknown route), an episode of two steps, an export, and a two-step search against
scripts/scripted_llm.py. Standard library only.

usage: python3 scripts/measure/soak.py --minutes 30 --out soak.json   (builds nothing: bin/kernelgate)
"""
import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KERNEL = open(os.path.join(REPO, "datasets", "solutions", "ci", "1_add_relu.py")).read()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Client:
    def __init__(self, url):
        self.url = url
        self.codes, self.lock = {}, threading.Lock()

    def call(self, method, path, body=None, raw=None, ctype="application/json", timeout=300):
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        req = urllib.request.Request(self.url + path, data=data, method=method)
        if data is not None:
            req.add_header("Content-Type", ctype)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                status, out = r.status, r.read()
        except urllib.error.HTTPError as e:
            status, out = e.code, e.read()
        except OSError:
            status, out = "error", b""
        with self.lock:
            self.codes[status] = self.codes.get(status, 0) + 1
        try:
            return status, json.loads(out) if out else None
        except ValueError:
            return status, out.decode(errors="replace")


def loop(stop, pause, fn):
    i = 0
    while not stop.is_set():
        fn(i)
        i += 1
        stop.wait(pause)


def tree_rss_kb(pid):
    """RSS of pid and every process below it (from /proc)."""
    children = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                ppid = int(open(f"/proc/{d}/stat").read().rsplit(")", 1)[1].split()[1])
                children.setdefault(ppid, []).append(int(d))
            except (OSError, IndexError, ValueError):
                pass
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            for line in open(f"/proc/{p}/status"):
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            pass
        todo.extend(children.get(p, []))
    return total


def metric(text, name):
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--minutes", type=float, default=30)
    ap.add_argument("--warmup", type=float, default=5, help="minutes before the first window")
    ap.add_argument("--every", type=float, default=15, help="seconds between samples")
    ap.add_argument("--out", default="soak.json")
    ap.add_argument("--serve-args", default="", help="more serve flags, e.g. '--result-ttl 5m' (state that a day's TTL keeps grows until then)")
    a = ap.parse_args()
    data, port, llm_port = tempfile.mkdtemp(prefix="kg-soak-"), free_port(), free_port()
    llm = subprocess.Popen([sys.executable, os.path.join(REPO, "scripts", "scripted_llm.py"), "--port", str(llm_port),
                            "--kernel", os.path.join(REPO, "datasets", "solutions", "ci", "1_add_relu.py")])
    log = open(os.path.join(data, "serve.log"), "wb")
    srv = subprocess.Popen([os.path.join(REPO, "bin", "kernelgate"), "serve", "--addr", f"127.0.0.1:{port}",
                            "--data", os.path.join(data, "d"), "--open", "--llm-url", f"http://127.0.0.1:{llm_port}/v1",
                            "--model", "scripted", *a.serve_args.split()], stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    c = Client(f"http://127.0.0.1:{port}")
    for _ in range(600):
        if c.call("GET", "/readyz")[0] == 200:
            break
        time.sleep(0.5)
    else:
        raise SystemExit("serve not ready:\n" + open(os.path.join(data, "serve.log")).read()[-2000:])
    c.codes.clear()   # the polls before serve listened are no answers of the soak
    stop, last = threading.Event(), {"batch": None}

    def rewards(i):
        st, r = c.call("POST", "/v1/rewards", {"task_id": "ci/1_add_relu", "codes": [KERNEL + f"\n# soak {i}\n", "def broken(:\n"],
                                               "cache": False, "wait_s": 120})
        if isinstance(r, dict) and r.get("batch_id"):
            last["batch"] = r["batch_id"]

    def reads(i):
        paths = ["/metrics", "/v1/tasks?limit=5", "/readyz", "/v1/gpus"]
        if last["batch"]:
            paths.append(f"/v1/batches/{last['batch']}")
        c.call("GET", paths[i % len(paths)])

    def bad(i):
        [lambda: c.call("POST", "/v1/rewards", raw=b"{not json"),
         lambda: c.call("POST", "/v1/rewards", raw=b"a=1", ctype="application/x-www-form-urlencoded"),
         lambda: c.call("POST", "/v1/rewards", raw=b'{"task_id": "ci/1_add_relu", "task_id": "x", "codes": ["y"]}'),
         lambda: c.call("GET", "/v1/nope")][i % 4]()

    def episodes(i):
        st, e = c.call("POST", "/v1/episodes", {"task_id": "ci/1_add_relu", "max_turns": 2})
        if isinstance(e, dict) and e.get("episode_id"):
            for k in range(2):
                c.call("POST", f"/v1/episodes/{e['episode_id']}/step",
                       {"completion": f"```python\n{KERNEL}\n# ep {i} {k}\n```"})

    def exports(i):
        c.call("POST", "/v1/exports", {"format": "sft"})

    def searches(i):
        st, s = c.call("POST", "/v1/searches", {"task_id": "ci/1_add_relu", "steps": 2, "policy": "sample"})
        if isinstance(s, dict) and s.get("search_id"):
            for _ in range(120):
                if stop.is_set() or c.call("GET", f"/v1/searches/{s['search_id']}")[1].get("state") != "running":
                    break
                time.sleep(1)

    loops = [(rewards, 1.0), (reads, 0.5), (bad, 2.0), (episodes, 10.0), (exports, 120.0), (searches, 60.0)]
    threads = [threading.Thread(target=loop, args=(stop, p, f), daemon=True) for f, p in loops]
    for t in threads:
        t.start()
    samples, t0 = [], time.monotonic()
    try:
        while time.monotonic() - t0 < a.minutes * 60:
            time.sleep(a.every)
            st, text = c.call("GET", "/metrics", timeout=30)
            text = text if isinstance(text, str) else ""
            samples.append({"t_s": round(time.monotonic() - t0, 1),
                            "rss_mb": (metric(text, "process_resident_memory_bytes") or 0) / 2**20,
                            "open_fds": metric(text, "process_open_fds"), "goroutines": metric(text, "go_goroutines"),
                            "heap_inuse_mb": (metric(text, "go_memstats_heap_inuse_bytes") or 0) / 2**20,
                            "heap_objects": metric(text, "go_memstats_heap_objects"),
                            "tree_rss_mb": tree_rss_kb(srv.pid) / 1024,
                            "evaluations": sum(float(l.split()[1]) for l in text.splitlines()
                                               if l.startswith("kernelgate_evaluations_total{"))})
            s = samples[-1]
            print(f"{s['t_s']:7.0f}s rss {s['rss_mb']:6.1f} MiB heap {s['heap_inuse_mb']:6.1f} MiB "
                  f"tree {s['tree_rss_mb']:7.1f} MiB fds {s['open_fds']} "
                  f"goroutines {s['goroutines']} evaluations {s['evaluations']:.0f}", flush=True)
    finally:
        stop.set()
        for t in threads:
            t.join(150)
        srv.send_signal(signal.SIGTERM)
        code = srv.wait(120)
        llm.kill()
    early = [s for s in samples if a.warmup * 60 <= s["t_s"] < (a.warmup + 5) * 60]
    late = [s for s in samples if s["t_s"] >= a.minutes * 60 - 5 * 60]
    summary = {}
    for k in ("rss_mb", "heap_inuse_mb", "heap_objects", "tree_rss_mb", "open_fds", "goroutines"):
        e = statistics.median(s[k] for s in early) if early else None
        l = statistics.median(s[k] for s in late) if late else None
        summary[k] = {"after_warmup": e, "end": l, "max": max(s[k] for s in samples),
                      "ratio": round(l / e, 3) if e and l else None}
    rep = {"minutes": a.minutes, "samples": samples, "summary": summary, "status_codes": {str(k): v for k, v in c.codes.items()},
           "evaluations": samples[-1]["evaluations"] if samples else 0, "serve_exit": code}
    with open(a.out, "w") as f:
        json.dump(rep, f, indent=1)
    print(json.dumps({k: v for k, v in rep.items() if k != "samples"}, indent=1))


if __name__ == "__main__":
    main()
