"""The status board: the latest snapshot each actor published, which the routes read instead of asking it.

A snapshot is copied once, when put (actors publish far less often than /status reads), so what get() and
all() return is shared by every reader and read-only.
"""
from __future__ import annotations

import copy
import threading


class Board:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._snaps: dict = {}
        self.version = 0            # bumped by every put

    def put(self, name: str, snapshot: dict) -> None:
        snapshot = copy.deepcopy(snapshot)
        with self._lock:
            self._snaps[name] = snapshot
            self.version += 1

    def get(self, name: str, default=None):
        with self._lock:
            return self._snaps.get(name, default)

    def all(self) -> dict:
        with self._lock:
            return dict(self._snaps)
