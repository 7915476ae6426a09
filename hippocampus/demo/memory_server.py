"""A throwaway SerenMemory: the real app under uvicorn in a daemon thread, with an offline embedder, its store in
a directory of its own, update checks and backups off; and the hand that calls Memory's routes as the main model
does. The demo runs one; the tests run one per session (tests/harness/ adds what they need).
"""
from __future__ import annotations

import contextlib
import math
import os
import re
import threading
import time
import zlib
from pathlib import Path
from typing import Optional

import requests

from hippocampus import memory
from hippocampus.demo.waiting import free_port

EIGHT_DAYS = 8 * 86400
DIM = 64
_TOKEN = re.compile(r"[a-z0-9]+")


def embed_text(text: str) -> list:
    """A hashed bag of words: lower-cased [a-z0-9]+ tokens, crc32 into 64 buckets, L2-normalised."""
    v = [0.0] * DIM
    for tok in _TOKEN.findall((text or "").lower()):
        v[zlib.crc32(tok.encode()) % DIM] += 1.0
    norm = math.sqrt(sum(x * x for x in v))
    return [x / norm for x in v] if norm else [1.0] + v[1:]


def hash_embedder():
    """A chromadb EmbeddingFunction over embed_text (chromadb is imported here, when it is first needed)."""
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


def quiet_memory_env() -> None:
    """SerenMemory's update checks and chromadb's telemetry off, its log quiet (before it is imported)."""
    os.environ.setdefault("SEREN_MEMORY_UPDATES_ENABLED", "0")
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    os.environ.setdefault("SEREN_MEMORY_LOG_LEVEL", "WARNING")


def memory_config(persist_dir: Path, *, short_term_seconds: int = EIGHT_DAYS, bearer: str = ""):
    """A MemoryConfig for a throwaway store in persist_dir: no update checks, no backups, no eidetic."""
    quiet_memory_env()
    from seren_memory.config import MemoryConfig

    cfg = MemoryConfig()
    cfg.storage.persist_dir = str(persist_dir)
    cfg.updates.enabled = False
    cfg.backup.enabled = False
    cfg.lifetimes.short_term_seconds = short_term_seconds
    cfg.consolidator.pruned_safety_days = 1
    cfg.server.bearer_token = bearer
    with contextlib.suppress(AttributeError):
        cfg.eidetic.enabled = False
    return cfg


def close_store(store) -> None:
    """Close a MemoryStore and the chromadb client under it: seren-memory 5.4's close() never closes the client,
    whose System chromadb caches at class level (about 7 descriptors kept per replaced store)."""
    client = getattr(store, "_client", None)
    with contextlib.suppress(Exception):      # a half-closed store is still let go below
        store.close()
    if client is not None:
        with contextlib.suppress(Exception):
            client.close()


class MemoryServer:

    def __init__(self, persist_dir: Path, port: Optional[int] = None, bearer: str = ""):
        self.cfg = memory_config(persist_dir, bearer=bearer)        # first: it quiets SerenMemory before its import
        import uvicorn
        from seren_memory.app import create_app

        self.embedder = hash_embedder()
        self.app = create_app(self.cfg, embedding_function=self.embedder, _allow_store_reset=True)
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._server = uvicorn.Server(uvicorn.Config(self.app, host="127.0.0.1", port=self.port,
                                                     log_level="warning", lifespan="on"))
        self._thread = threading.Thread(target=self._server.run, name="seren-memory", daemon=True)

    def start(self, timeout: float = 60.0) -> "MemoryServer":
        self._thread.start()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self._thread.is_alive():
            with contextlib.suppress(requests.RequestException):
                if requests.get(self.url + "/health", timeout=1).status_code == 200 and \
                        getattr(self.app.state, "store", None) is not None:
                    return self
            time.sleep(0.05)
        raise RuntimeError("the throwaway SerenMemory did not come up")

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)
        store = getattr(self.app.state, "store", None)
        if store is not None:
            close_store(store)


class MemoryHand:
    """Writes fragments and briefs, reads and reviews drafts, reads long-term memory, over Memory's routes."""

    def __init__(self, url: str, bearer: str = ""):
        self.url = url.rstrip("/")
        self.s = requests.Session()
        if bearer:
            self.s.headers["Authorization"] = f"Bearer {bearer}"

    def _req(self, method: str, path: str, **kw):
        r = memory.send(self.s, method, self.url + path, timeout=30, **kw)     # a dropped GET is asked again
        r.raise_for_status()
        return r.json()

    def short(self, content: str, topic: Optional[str] = None, ts: Optional[float] = None) -> str:
        """A short-term fragment (at `ts`, if given); returns its id."""
        body: dict = {"content": content, "topic": topic}
        if ts is not None:
            body["ts"] = ts
        return self._req("POST", "/short", json=body)["id"]

    def brief(self, summary: str, promote=(), noise=()) -> str:
        return self._req("POST", "/brief", json={"summary": summary, "promote_hints": list(promote),
                                                 "noise_hints": list(noise)})["id"]

    def draft(self, draft_id: str) -> dict:
        return self._req("GET", f"/drafts/{draft_id}")

    def review(self, draft_id: str, decisions: list) -> dict:
        return self._req("POST", f"/drafts/{draft_id}/review", json={"decisions": decisions})

    def long(self) -> list:
        return self._req("GET", "/long", params={"include_satellites": "false"})["entries"]
