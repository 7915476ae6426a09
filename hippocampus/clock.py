"""One injectable clock, so tests move time without waiting."""
from __future__ import annotations

import threading
import time


class Clock:
    """Wall time (epoch seconds). The real one."""

    def now(self) -> float:
        return time.time()

    def localtime(self, ts: float) -> time.struct_time:
        return time.localtime(ts)


class FakeClock(Clock):
    """A clock a test sets and advances by hand."""

    def __init__(self, start: float = 1_767_225_600.0):  # 2026-01-01 00:00 UTC
        self._t = float(start)
        self._lock = threading.Lock()

    def now(self) -> float:
        with self._lock:
            return self._t

    def set(self, t: float) -> None:
        with self._lock:
            self._t = float(t)

    def advance(self, seconds: float) -> float:
        with self._lock:
            self._t += seconds
            return self._t
