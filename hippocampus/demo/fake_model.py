"""A real local HTTP server that speaks the OpenAI-compatible chat API, standing in for the small model.

Answers come from a script: a list of replies taken in order (the last one repeats), or a function
of the request (`responder`). A reply is a string (the answer text) or a dict with any of: content,
finish_reason ("stop" or "length"), status (an HTTP error status), delay (seconds), model. A script
that raises is answered 500, as a real server's error would be. Every request is logged, how many
are being answered is counted (`in_flight`), and GET /health answers (200, or `health_status`).
"""
from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Optional, Union

Reply = Union[str, dict]
NO_OPERATIONS = '{"operations": []}'


class _Handler(BaseHTTPRequestHandler):
    """The routes of a FakeModel, which its server carries as `.fake`."""
    protocol_version = "HTTP/1.1"

    def log_message(self, *a: Any) -> None:  # quiet
        pass

    def _send(self, status: int, body: Any) -> None:
        raw = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        try:
            self.wfile.write(raw)
        except OSError:
            pass

    def do_GET(self) -> None:  # noqa: N802
        fake = self.server.fake
        path = self.path.split("?")[0].rstrip("/")
        if path in ("/health", "/v1/health"):
            self._send(fake.health_status, {"status": "ok" if fake.health_status == 200 else "loading"})
        elif path.endswith("/models"):
            self._send(200, {"data": [{"id": fake.model_name}]})
        else:
            self._send(404, {"error": "not found"})

    def do_POST(self) -> None:  # noqa: N802
        fake = self.server.fake
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            body = {}
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send(404, {"error": "not found"})
            return
        with fake.lock:
            fake.requests.append(body)
            fake.in_flight += 1
        try:
            self._answer(fake, body)
        finally:
            with fake.lock:
                fake.in_flight -= 1

    def _answer(self, fake: "FakeModel", body: dict) -> None:
        try:
            reply = fake.reply(body)
        except Exception as exc:  # noqa: BLE001 - a script error is a 500, as a real server's would be
            self._send(500, {"error": f"{type(exc).__name__}: {exc}"})
            return
        if reply.get("delay"):
            time.sleep(float(reply["delay"]))
        if reply.get("status", 200) != 200:
            self._send(int(reply["status"]), {"error": reply.get("content", "fake failure")})
            return
        self._send(200, {
            "id": "chatcmpl-fake", "object": "chat.completion", "model": reply.get("model", fake.model_name),
            "choices": [{"index": 0, "finish_reason": reply.get("finish_reason", "stop"),
                         "message": {"role": "assistant", "content": reply.get("content", "")}}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})


class FakeModel:
    """The server, on a loopback port the OS picks; `url` is its OpenAI base (…/v1)."""

    def __init__(self, replies: Optional[list] = None, responder: Optional[Callable[[dict], Reply]] = None,
                 model_name: str = "fake-small-model"):
        self.replies: list = list(replies or [])
        self.responder = responder
        self.model_name = model_name
        self.requests: list = []
        self.health_status = 200
        self.lock = threading.Lock()
        self.in_flight = 0
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.server.daemon_threads = True
        self.server.fake = self                 # what the handler answers from
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self._thread = threading.Thread(target=self.server.serve_forever, name="fake-model", daemon=True)

    def reply(self, body: dict) -> dict:
        """The script's answer to one request, as a dict."""
        if self.responder is not None:
            reply = self.responder(body)
        else:
            with self.lock:
                if not self.replies:
                    reply = NO_OPERATIONS
                else:
                    reply = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
        return {"content": reply} if isinstance(reply, str) else reply

    def prompts(self) -> list:
        return [r["messages"][-1]["content"] for r in self.requests if r.get("messages")]

    def start(self) -> "FakeModel":
        self._thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
