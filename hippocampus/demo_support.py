"""What the demo needs and the package must not take from tests/: a throwaway SerenMemory, an
offline embedder, a scripted stand-in for the small model, and a hand that reviews through Memory.

Copied (trimmed) from the test harness: tests/harness/{embedder,memory_server,fake_model,reviewer}.py.
SerenMemory, chromadb and uvicorn come with the [dev] extra; nothing here imports them until used.
"""
from __future__ import annotations

import json
import math
import os
import re
import socket
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable, Optional

import requests

DAY = 86400.0
DIM = 64
_TOKEN = re.compile(r"[a-z0-9]+")


def quiet_memory_env() -> None:
    """SerenMemory's update checks and chromadb's telemetry off, its log quiet (before it is imported)."""
    os.environ.setdefault("SEREN_MEMORY_UPDATES_ENABLED", "0")
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    os.environ.setdefault("SEREN_MEMORY_LOG_LEVEL", "WARNING")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(pred: Callable[[], Any], timeout: float = 10.0, interval: float = 0.02, what: str = "condition"):
    """Poll until pred() is truthy; return its value. Raises TimeoutError at the deadline."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = pred()
        if last:
            return last
        time.sleep(interval)
    raise TimeoutError(f"timed out after {timeout} s waiting for {what} (last: {last!r})")


# ---------------------------------------------------------------- the offline embedder

def embed_text(text: str) -> list:
    """A hashed bag of words: lower-cased [a-z0-9]+ tokens, crc32 into 64 buckets, L2-normalised."""
    v = [0.0] * DIM
    for tok in _TOKEN.findall((text or "").lower()):
        v[zlib.crc32(tok.encode()) % DIM] += 1.0
    norm = math.sqrt(sum(x * x for x in v))
    if norm == 0:
        v[0] = 1.0
        return v
    return [x / norm for x in v]


def hash_embedder():
    """A chromadb EmbeddingFunction over embed_text: deterministic, offline, no model download."""
    from chromadb.api.types import Documents, EmbeddingFunction, Embeddings

    class HashEmbedder(EmbeddingFunction[Documents]):
        def __init__(self) -> None:
            pass

        @staticmethod
        def name() -> str:
            return "hippocampus-demo-hash"

        def get_config(self) -> dict:
            return {}

        @classmethod
        def build_from_config(cls, config: dict) -> "HashEmbedder":
            return cls()

        def __call__(self, input: Documents) -> Embeddings:  # noqa: A002 - chromadb's name
            return [embed_text(t) for t in input]

    return HashEmbedder()


# ---------------------------------------------------------------- a throwaway SerenMemory

class ThrowawayMemory:
    """The real SerenMemory app (seren_memory.app.create_app) under uvicorn in a daemon thread,
    with the offline embedder, its store in persist_dir, update checks and backups off."""

    def __init__(self, persist_dir: Path, port: Optional[int] = None):
        quiet_memory_env()
        import uvicorn
        from seren_memory.app import create_app
        from seren_memory.config import MemoryConfig

        cfg = MemoryConfig()
        cfg.storage.persist_dir = str(persist_dir)
        cfg.updates.enabled = False
        cfg.backup.enabled = False
        cfg.lifetimes.short_term_seconds = 8 * int(DAY)
        try:
            cfg.eidetic.enabled = False
        except AttributeError:
            pass
        self.cfg = cfg
        self.app = create_app(cfg, embedding_function=hash_embedder())
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._server = uvicorn.Server(uvicorn.Config(self.app, host="127.0.0.1", port=self.port,
                                                     log_level="warning", lifespan="on"))
        self._thread = threading.Thread(target=self._server.run, name="seren-memory", daemon=True)

    def start(self, timeout: float = 60.0) -> "ThrowawayMemory":
        self._thread.start()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if requests.get(self.url + "/health", timeout=1).status_code == 200 and \
                        getattr(self.app.state, "store", None) is not None:
                    return self
            except requests.RequestException:
                pass
            if not self._thread.is_alive():
                break
            time.sleep(0.05)
        raise RuntimeError("the throwaway SerenMemory did not come up")

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)
        store = getattr(self.app.state, "store", None)
        if store is not None and hasattr(store, "close"):
            try:
                store.close()
            except Exception:  # noqa: BLE001 - a throwaway store: best effort
                pass


# ---------------------------------------------------------------- the hand that reviews

class MemoryHand:
    """Calls Memory's own routes, as the main model (or a person) does."""

    def __init__(self, url: str, bearer: str = ""):
        self.url = url.rstrip("/")
        self.s = requests.Session()
        if bearer:
            self.s.headers["Authorization"] = f"Bearer {bearer}"

    def _req(self, method: str, path: str, **kw):
        r = self.s.request(method, self.url + path, timeout=30, **kw)
        r.raise_for_status()
        return r.json()

    def short(self, content: str, topic: Optional[str] = None, ts: Optional[float] = None) -> str:
        body: dict = {"content": content, "topic": topic}
        if ts is not None:
            body["ts"] = ts
        return self._req("POST", "/short", json=body)["id"]

    def brief(self, summary: str, promote=(), noise=()) -> str:
        return self._req("POST", "/brief", json={"summary": summary, "promote_hints": list(promote),
                                                 "noise_hints": list(noise)})["id"]

    def drafts(self, status: Optional[str] = None) -> list:
        params: dict = {"limit": 200}
        if status:
            params["status"] = status
        return self._req("GET", "/drafts", params=params)["entries"]

    def draft(self, draft_id: str) -> dict:
        return self._req("GET", f"/drafts/{draft_id}")

    def review(self, draft_id: str, decisions: list) -> dict:
        return self._req("POST", f"/drafts/{draft_id}/review", json={"decisions": decisions})

    def long(self) -> list:
        return self._req("GET", "/long", params={"include_satellites": "false"})["entries"]


# ---------------------------------------------------------------- a scripted small model

FALLBACK_REPLY = '{"operations": []}'


def _markers(prompt: str, prefix: str) -> list:
    return re.findall(r"^\[(" + prefix + r"\d+)\]", prompt, flags=re.M)


def scripted_reply(body: dict, statements: Optional[dict] = None) -> str:
    """A small model that follows the prompt contract: one new_core per topic (worded from `statements`,
    keyed by a word of the topic); a redraft takes the critique's words after 'say:' as its content."""
    messages = body.get("messages") or []
    prompt = messages[-1].get("content", "") if messages else ""
    frags = _markers(prompt, "f")
    if "THE CRITIQUE:" in prompt:
        critique = prompt.split("THE CRITIQUE:", 1)[1].strip().splitlines()[0]
        m = re.search(r"say:\s*(.+)", critique)
        if not m:
            return FALLBACK_REPLY                      # nothing to say instead: withdraw
        return json.dumps({"operations": [{"kind": "new_core", "content": m.group(1).strip(),
                                           "fragments": frags, "target": None,
                                           "rationale": "as the critique says"}]})
    found = re.search(r"^Topic: (.+)$", prompt, flags=re.M)
    topic = found.group(1).strip() if found else "untagged"
    content = next((text for word, text in (statements or {}).items() if word in topic.lower()),
                   f"Something that keeps coming back: {topic}.")
    return json.dumps({"operations": [{"kind": "new_core", "content": content, "topic": topic,
                                       "fragments": frags, "target": None,
                                       "rationale": "the fragments agree"}]})


class _ScriptedHandler(BaseHTTPRequestHandler):
    """The OpenAI-compatible routes of a ScriptedModel, which its server carries as `.scripted`."""
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
        model = self.server.scripted
        path = self.path.split("?")[0].rstrip("/")
        if path in ("/health", "/v1/health"):
            self._send(200, {"status": "ok"})
        elif path.endswith("/models"):
            self._send(200, {"data": [{"id": model.model_name}]})
        else:
            self._send(404, {"error": "not found"})

    def do_POST(self) -> None:  # noqa: N802
        model = self.server.scripted
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            body = {}
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send(404, {"error": "not found"})
            return
        model.requests.append(body)
        if model.delay:
            time.sleep(model.delay)
        try:
            text = model.responder(body)
        except Exception as exc:  # noqa: BLE001 - a script error is a 500, as a real server's would be
            self._send(500, {"error": f"{type(exc).__name__}: {exc}"})
            return
        self._send(200, {
            "id": "chatcmpl-scripted", "object": "chat.completion", "model": model.model_name,
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})


class ScriptedModel:
    """A real local HTTP server speaking the OpenAI-compatible chat API, answering from a function."""

    def __init__(self, responder: Callable[[dict], str], model_name: str = "scripted-small-model",
                 delay: float = 0.0):
        self.responder = responder
        self.model_name = model_name
        self.delay = delay
        self.requests: list = []
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _ScriptedHandler)
        self.server.daemon_threads = True
        self.server.scripted = self            # what the handler answers from
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self._thread = threading.Thread(target=self.server.serve_forever, name="scripted-model", daemon=True)

    def start(self) -> "ScriptedModel":
        self._thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
