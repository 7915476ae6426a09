"""A throwaway SerenMemory: the real app (seren_memory.app.create_app) under uvicorn in a daemon thread,
with the offline embedder, its store in a directory of its own, update checks and backups off. The demo
runs one; the tests run one per session (tests/harness/memory_server.py adds what they need).
"""
from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Optional

import requests

from hippocampus.demo.embedder import hash_embedder
from hippocampus.demo.waiting import free_port

EIGHT_DAYS = 8 * 86400


def quiet_memory_env() -> None:
    """SerenMemory's update checks and chromadb's telemetry off, its log quiet (before it is imported)."""
    os.environ.setdefault("SEREN_MEMORY_UPDATES_ENABLED", "0")
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    os.environ.setdefault("SEREN_MEMORY_LOG_LEVEL", "WARNING")


def memory_config(persist_dir: Path, *, short_term_seconds: int = EIGHT_DAYS, pruned_safety_days: int = 1,
                  bearer: str = ""):
    """A MemoryConfig for a throwaway store in persist_dir: no update checks, no backups, no eidetic."""
    quiet_memory_env()
    from seren_memory.config import MemoryConfig

    cfg = MemoryConfig()
    cfg.storage.persist_dir = str(persist_dir)
    cfg.updates.enabled = False
    cfg.backup.enabled = False
    cfg.lifetimes.short_term_seconds = short_term_seconds
    cfg.consolidator.pruned_safety_days = pruned_safety_days
    cfg.server.bearer_token = bearer
    try:
        cfg.eidetic.enabled = False
    except AttributeError:
        pass
    return cfg


def close_store(store) -> None:
    """Close a MemoryStore and the chromadb client under it: seren-memory 5.4's close() never closes the
    client, whose System chromadb caches at class level, so each replaced store kept its files, handles and
    threads (about 7 descriptors a test). Reaching past close() to the client is the only way to free them."""
    client = getattr(store, "_client", None)
    try:
        store.close()
    except Exception:  # noqa: BLE001 - a half-closed store is still let go below
        pass
    if client is not None:
        try:
            client.close()
        except Exception:  # noqa: BLE001
            pass


class MemoryServer:
    """The real SerenMemory app under uvicorn in a daemon thread, on a loopback port."""

    def __init__(self, persist_dir: Path, port: Optional[int] = None, bearer: str = ""):
        quiet_memory_env()
        import uvicorn
        from seren_memory.app import create_app

        self.embedder = hash_embedder()
        self.cfg = memory_config(persist_dir, bearer=bearer)
        self.app = create_app(self.cfg, embedding_function=self.embedder, _allow_store_reset=True)
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._server = uvicorn.Server(uvicorn.Config(self.app, host="127.0.0.1", port=self.port,
                                                     log_level="warning", lifespan="on"))
        self._thread = threading.Thread(target=self._server.run, name="seren-memory", daemon=True)

    def start(self, timeout: float = 60.0) -> "MemoryServer":
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
        if store is not None:
            close_store(store)
