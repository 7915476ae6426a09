"""A free loopback port, and polling until a condition holds."""
from __future__ import annotations

import socket
import time
from typing import Any, Callable


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(pred: Callable[[], Any], timeout: float = 10.0, interval: float = 0.02, what: str = "condition"):
    """Poll until pred() is truthy; return its value. Raises TimeoutError at the deadline."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = pred()
        if last:
            return last
        time.sleep(interval)
    raise TimeoutError(f"timed out after {timeout} s waiting for {what} (last: {last!r})")
