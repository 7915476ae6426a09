"""A stand-in for llama-server, run as a real subprocess.

    python fake_llama_server.py -m MODEL --host H --port P [extra args...]

It refuses to start (exit 1) when the -m file does not exist, answers
GET /health with 503 while it "loads" (its first second; FAKE_LLAMA_WARMUP
overrides; the load also ends once the file FAKE_LLAMA_RELEASE names exists) and 200 after, and serves POST /v1/chat/completions from a JSON
script named by FAKE_LLAMA_SCRIPT: a list of reply strings taken in order, the
last one repeating (no script: '{"operations": []}'). Each request line goes
to stdout. Stdlib only.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DEFAULT_REPLY = '{"operations": []}'


def _load_script() -> list:
    path = os.environ.get("FAKE_LLAMA_SCRIPT", "")
    if not path:
        return [DEFAULT_REPLY]
    with open(path, encoding="utf-8") as f:
        replies = json.load(f)
    return [str(r) for r in replies] or [DEFAULT_REPLY]


def main(argv: list) -> int:
    ap = argparse.ArgumentParser(prog="fake_llama_server")
    ap.add_argument("-m", "--model", required=True)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8080)
    args, extra = ap.parse_known_args(argv)
    if not os.path.isfile(args.model):
        print(f"error: failed to load model '{args.model}': no such file", file=sys.stderr, flush=True)
        return 1
    replies = _load_script()
    warmup = float(os.environ.get("FAKE_LLAMA_WARMUP", "1.0"))
    release = os.environ.get("FAKE_LLAMA_RELEASE")
    started = time.monotonic()

    def loading() -> bool:
        return time.monotonic() - started < warmup and not (release and os.path.exists(release))
    lock = threading.Lock()
    served = {"n": 0}

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a) -> None:  # our own log line instead
            pass

        def _send(self, status: int, body: dict) -> None:
            raw = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def do_GET(self) -> None:
            print(self.requestline, flush=True)
            if self.path.split("?")[0] == "/health":
                if loading():
                    self._send(503, {"error": {"code": 503, "message": "Loading model"}})
                else:
                    self._send(200, {"status": "ok"})
            elif self.path.split("?")[0] == "/v1/models":
                self._send(200, {"data": [{"id": os.path.basename(args.model)}]})
            else:
                self._send(404, {"error": "not found"})

        def do_POST(self) -> None:
            print(self.requestline, flush=True)
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            if self.path.split("?")[0] != "/v1/chat/completions":
                self._send(404, {"error": "not found"})
                return
            try:
                json.loads(raw or b"{}")
            except ValueError:
                self._send(400, {"error": "bad json"})
                return
            if loading():
                self._send(503, {"error": {"code": 503, "message": "Loading model"}})
                return
            with lock:
                text = replies[min(served["n"], len(replies) - 1)]
                served["n"] += 1
            self._send(200, {
                "id": f"chatcmpl-{served['n']}", "object": "chat.completion", "created": int(time.time()),
                "model": os.path.basename(args.model),
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": text}}],
                "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
            })

    server = ThreadingHTTPServer((args.host, args.port), Handler)
    server.daemon_threads = True
    print(f"fake llama-server listening on {args.host}:{args.port} (model {args.model}, "
          f"extra {' '.join(extra)})", flush=True)
    try:
        server.serve_forever(poll_interval=0.1)
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
