"""Is Memory answering, is the model answering: watched in the background, so no request waits on either."""
from __future__ import annotations

import threading
import time
from typing import Callable

import requests

from hippocampus.config import redact
from hippocampus.memory import MemoryError_


class Watch:
    """A probe's last answer, refreshed on a thread of its own when older than ttl (never on the caller's)."""

    def __init__(self, probe: Callable[[], dict], ttl: float, first: dict):
        self.probe, self.ttl = probe, ttl
        self._lock = threading.Lock()
        self._snap = {**first, "checked_at": 0.0}
        self._running = False
        self.version = 0        # bumped by every answer of the probe

    def refresh(self) -> dict:
        snap = {**self.probe(), "checked_at": time.time()}
        with self._lock:
            self._snap = snap
            self._running = False
            self.version += 1
        return snap

    def snapshot(self) -> dict:
        with self._lock:
            self._look_again_if_stale()
            return dict(self._snap)

    def current(self) -> int:
        """The version of the last answer (a look again started if it is stale): cheaper than snapshot()."""
        with self._lock:
            self._look_again_if_stale()
            return self.version

    def _look_again_if_stale(self) -> None:
        if time.time() - self._snap["checked_at"] > self.ttl and not self._running:
            self._running = True
            threading.Thread(target=self.refresh, name="status-watch", daemon=True).start()


class MemoryWatch(Watch):
    def __init__(self, memory, ttl: float = 5.0):
        self.memory = memory
        self.shown_url = redact.url(memory.url)         # what /status shows: no user:password@, no ?key=
        super().__init__(self._probe, ttl, {"reachable": None, "url": self.shown_url, "error": None})

    def _probe(self) -> dict:
        try:
            self.memory.health()
            return {"reachable": True, "url": self.shown_url, "error": None}
        except MemoryError_ as exc:
            return {"reachable": False, "url": self.shown_url, "error": redact.text(str(exc))}


class ModelWatch(Watch):
    """A configured model this service does not start itself should answer at all times: is it?
    (A managed one is down between sleeps by design, so it is not watched.)"""

    def __init__(self, model_cfg, ttl: float = 10.0):
        self.cfg = model_cfg
        super().__init__(self._probe, ttl, {"answering": None, "error": None})

    @property
    def watched(self) -> bool:
        return self.cfg.configured and not self.cfg.lifecycle.managed

    def _probe(self) -> dict:
        if not self.watched:
            return {"answering": None, "error": None}
        try:
            r = requests.get(self.cfg.url.rstrip("/") + "/models", timeout=3)
            if r.status_code < 500:
                return {"answering": True, "error": None}
            return {"answering": False, "error": f"HTTP {r.status_code}"}
        except requests.RequestException as exc:
            return {"answering": False, "error": type(exc).__name__}
