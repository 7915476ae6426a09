"""One injectable clock, so tests move time without waiting."""
from __future__ import annotations

import time


class Clock:
    """Wall time (epoch seconds). The real one."""

    def now(self) -> float:
        return time.time()

    def localtime(self, ts: float) -> time.struct_time:
        return time.localtime(ts)
