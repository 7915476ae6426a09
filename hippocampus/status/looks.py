"""Is someone looking (a viewer's poll, a /status or /queue client)? A look marks it; while one was seen within
LOOK_SECONDS the watches read Memory and the model on every beat, so what is shown is at most a beat and a read
older than Memory. Nobody looking: the watches keep their own slow pace. Plain and thread-safe (a float)."""
from __future__ import annotations

import time

LOOK_SECONDS = 5.0


class Looks:
    def __init__(self, seconds: float = LOOK_SECONDS) -> None:
        self.seconds = seconds
        self._last = float("-inf")

    def look(self) -> None:
        self._last = time.monotonic()

    def watched(self) -> bool:
        return time.monotonic() - self._last <= self.seconds
