"""One cycle at a time: a sleep, a tend and a check exclude each other.

A request that finds the cycle busy is refused at once (HTTP 409, an MCP busy
message), never queued behind a model call. The lock is taken by whoever asks
first (a route, the scheduler) and handed to the actor that does the work.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Optional


class Busy(Exception):
    def __init__(self, what: str, since: float):
        self.what, self.since = what, since
        stamp = time.strftime("%H:%M:%S", time.localtime(since))
        super().__init__(f"busy: {what} since {stamp}")


@dataclass(frozen=True)
class Token:
    what: str
    since: float
    n: int


class CycleLock:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: Optional[Token] = None
        self._n = 0

    def enter(self, what: str) -> Token:
        with self._lock:
            if self._held is not None:
                raise Busy(self._held.what, self._held.since)
            self._n += 1
            self._held = Token(what, time.time(), self._n)
            return self._held

    def leave(self, token: Token) -> None:
        with self._lock:
            if self._held is token:
                self._held = None

    def holder(self) -> Optional[Token]:
        return self._held

    def describe(self) -> Optional[dict]:
        h = self._held
        return None if h is None else {"what": h.what, "since": h.since}
