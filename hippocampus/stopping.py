"""The stop, as the domain sees it: a flag set once, and the exception a step cut short by it raises.

A stop is not a failure: a sleep or redraft it cuts short is recorded as interrupted, keeps its brief and posts
nothing; the request waiting on it is answered 503.
"""
from __future__ import annotations

import threading
import time
from typing import Optional


class ServiceStopping(Exception):
    def __init__(self, what: str = "the work in hand was cut short") -> None:
        super().__init__(f"the service is stopping: {what}")


class StopFlag(threading.Event):
    """Set once by whoever stops the service (any thread); checked by the steps before each slow call. `at`: when
    it was first set (time.monotonic()), from which the stop's waits are counted."""
    at: Optional[float] = None

    def set(self) -> None:
        if self.at is None:
            self.at = time.monotonic()
        super().set()

    def check(self, what: str) -> None:
        if self.is_set():
            raise ServiceStopping(what)
