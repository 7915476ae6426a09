"""A real local HTTP receiver (port 0) that records each POST (and GET) and answers as told, with `headers` too
(a Location): for webhooks and ripples."""
from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Receiver:
    def __init__(self, path: str = "/hook") -> None:
        self.requests: list = []
        self.status = 200
        self.answer: bytes = b'{"ok": true}'
        self.content_type = "application/json"
        self.headers: dict = {}
        self.delay = 0.0
        self.release = threading.Event()
        rec = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                rec.requests.append({"path": self.path, "headers": dict(self.headers),
                                     "body": json.loads(raw or b"null"), "at": time.time()})
                if rec.delay:
                    rec.release.wait(rec.delay)
                try:
                    self.send_response(rec.status)
                    self.send_header("Content-Type", rec.content_type)
                    self.send_header("Content-Length", str(len(rec.answer)))
                    for name, value in rec.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(rec.answer)
                except OSError:
                    pass            # the caller gave up (a hanging receiver)

            def do_GET(self):  # noqa: N802
                rec.requests.append({"path": self.path, "method": "GET", "headers": dict(self.headers),
                                     "body": None, "at": time.time()})
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *a):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.url = self.base + path
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05},
                                       daemon=True)
        self.thread.start()

    def at(self, path: str) -> list:
        """What was delivered to path (the POSTs); a GET, such as the wake-up check's reach probe, is no delivery."""
        return [r for r in self.requests if r["path"] == path and r.get("method") != "GET"]

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()
