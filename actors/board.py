"""The status board: each actor publishes a small snapshot after every message.

Routes read the board; they never ask a busy actor. Thread-safe. A snapshot is
copied once, when it is put (so the actor can go on changing what it was built
from); what get() and all() return is shared by every reader and is read-only.
A /status reads the board on every request and actors publish far less often,
so copying on the way in, not on the way out, keeps /status cheap.
"""
from __future__ import annotations

import copy
import threading


class Board:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._snaps: dict = {}
        self.version = 0            # bumped by every put: what the status is built from has changed

    def put(self, name: str, snapshot: dict) -> None:
        snapshot = copy.deepcopy(snapshot)
        with self._lock:
            self._snaps[name] = snapshot
            self.version += 1

    def get(self, name: str, default=None):
        """The latest snapshot (read-only: never change what this returns)."""
        with self._lock:
            return self._snaps.get(name, default)

    def all(self) -> dict:
        """Every latest snapshot by name (a new mapping; the snapshots in it are read-only)."""
        with self._lock:
            return dict(self._snaps)
