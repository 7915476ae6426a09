"""The status board: each actor publishes a small snapshot after every message.

Routes read the board; they never ask a busy actor. Thread-safe, copy on read.
"""
from __future__ import annotations

import copy
import threading


class Board:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._snaps: dict = {}

    def put(self, name: str, snapshot: dict) -> None:
        with self._lock:
            self._snaps[name] = snapshot

    def get(self, name: str, default=None):
        with self._lock:
            v = self._snaps.get(name, default)
            return copy.deepcopy(v)

    def all(self) -> dict:
        with self._lock:
            return copy.deepcopy(self._snaps)
