"""A scripted OpenAI-compatible endpoint for measuring the search on a GPU machine
(which has no LLM): every chat completion answers with the same kernel file in a
```python block, with usage counted as len/4. It stands in for the model so that
what is measured is the search and the harness, not an LLM.

    python3 scripts/scripted_llm.py --port 8001 --kernel scripts/data/untuned_leaky_relu.py
"""
import argparse
import json
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=8001)
    ap.add_argument("--kernel", required=True)
    args = ap.parse_args()
    code = open(args.kernel).read()
    reply = "Here is the kernel.\n\n```python\n" + code.rstrip("\n") + "\n```\n"

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
            prompt = sum(len(m.get("content") or "") for m in body.get("messages", []))
            out = {"id": f"cmpl-{time.time_ns()}", "object": "chat.completion", "created": int(time.time()),
                   "model": body.get("model", "scripted"),
                   "choices": [{"index": 0, "finish_reason": "stop",
                                "message": {"role": "assistant", "content": reply}}],
                   "usage": {"prompt_tokens": prompt // 4, "completion_tokens": len(reply) // 4,
                             "total_tokens": prompt // 4 + len(reply) // 4}}
            data = json.dumps(out).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *a):
            pass

    srv = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    print(f"scripted LLM on http://127.0.0.1:{args.port}/v1", file=sys.stderr, flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
