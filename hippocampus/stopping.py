"""The stop, as the domain sees it: a flag set once, and the exception a step cut short by it raises.

A stop is not a failure. A sleep or a redraft that the stop cuts short is recorded as interrupted,
keeps its brief and posts nothing; the request that was waiting on it is answered 503.
"""
from __future__ import annotations

import threading


class ServiceStopping(Exception):
    """The service is stopping, so this step was cut short on purpose (nothing was posted)."""

    def __init__(self, what: str = "the work in hand was cut short") -> None:
        super().__init__(f"the service is stopping: {what}")


class StopFlag:
    """Set once by whoever stops the service (any thread); checked by the steps before each slow call."""

    def __init__(self) -> None:
        self._set = threading.Event()

    def set(self) -> None:
        self._set.set()

    def is_set(self) -> bool:
        return self._set.is_set()

    def check(self, what: str) -> None:
        """Raise ServiceStopping (saying `what` was cut short) once the stop has been asked for."""
        if self._set.is_set():
            raise ServiceStopping(what)
