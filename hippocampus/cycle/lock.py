"""One cycle at a time: a sleep, a tend and a check exclude each other. A request that finds the cycle busy is
refused at once (HTTP 409, an MCP busy message), never queued behind a model call."""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Optional

from hippocampus.words import busy


class Busy(Exception):
    def __init__(self, what: str, since: float):
        self.what, self.since = what, since
        super().__init__(f"busy: {busy(what, since)}")


@dataclass(frozen=True)
class Token:
    what: str
    since: float


class CycleLock:
    """publish(describe()): the board's (Context.wire), on every enter and leave."""
    publish = staticmethod(lambda busy: None)

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: Optional[Token] = None

    def enter(self, what: str) -> Token:
        with self._lock:
            if self._held is not None:
                raise Busy(self._held.what, self._held.since)
            self._held = Token(what, time.time())
            self.publish(self.describe())
            return self._held

    def leave(self, token: Token) -> None:
        with self._lock:
            if self._held is token:
                self._held = None
                self.publish(None)

    def holder(self) -> Optional[Token]:
        return self._held

    def describe(self) -> Optional[dict]:
        h = self._held
        return None if h is None else {"what": h.what, "since": h.since}
