"""A real local HTTP server that speaks the OpenAI-compatible chat API, standing in for the small model.

`responder(request)` returns the answer text or a dict of content, finish_reason ("stop" or "length") and model;
one that raises is answered 500.
"""
from __future__ import annotations

import contextlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Optional, Union

Reply = Union[str, dict]
NO_OPERATIONS = '{"operations": []}'


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a: Any) -> None:
        pass

    def send(self, status: int, body: Any) -> None:
        raw = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        with contextlib.suppress(OSError):
            self.wfile.write(raw)

    def do_GET(self) -> None:  # noqa: N802
        path = self.path.split("?")[0].rstrip("/")
        if path in ("/health", "/v1/health"):
            self.send(200, {"status": "ok"})
        elif path.endswith("/models"):
            meta = self.server.fake.meta          # llama-server's size and shape, when a test sets them
            self.send(200, {"data": [{"id": self.server.fake.model_name, **({"meta": meta} if meta else {})}]})
        else:
            self.send(404, {"error": "not found"})

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            body = {}
        if self.path.rstrip("/").endswith("/chat/completions"):
            self.server.fake.answer(self, body)
        else:
            self.send(404, {"error": "not found"})


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address) -> None:
        """A client that hung up (a probe that reads only the status line) is no error for the demo to print."""
        import sys

        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)


class FakeModel:
    """The server, on a loopback port the OS picks; `url` is its OpenAI base (…/v1)."""

    def __init__(self, responder: Optional[Callable[[dict], Reply]] = None, model_name: str = "fake-small-model"):
        self.responder = responder
        self.model_name = model_name
        self.meta: Optional[dict] = None
        self.server = _Server(("127.0.0.1", 0), _Handler)
        self.server.fake = self
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self._thread = threading.Thread(target=self.server.serve_forever, name="fake-model", daemon=True)

    def reply(self, body: dict) -> dict:
        reply = NO_OPERATIONS if self.responder is None else self.responder(body)
        return {"content": reply} if isinstance(reply, str) else reply

    def respond(self, reply: dict) -> tuple:
        return 200, {
            "id": "chatcmpl-fake", "object": "chat.completion", "model": reply.get("model", self.model_name),
            "choices": [{"index": 0, "finish_reason": reply.get("finish_reason", "stop"),
                         "message": {"role": "assistant", "content": reply.get("content", "")}}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}

    def answer(self, handler: _Handler, body: dict) -> None:
        try:
            reply = self.reply(body)
        except Exception as exc:  # noqa: BLE001 - a script error is a 500, as a real server's would be
            handler.send(500, {"error": f"{type(exc).__name__}: {exc}"})
            return
        handler.send(*self.respond(reply))

    def start(self) -> "FakeModel":
        self._thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
