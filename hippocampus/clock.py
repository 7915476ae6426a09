"""One injectable clock, so tests move time without waiting."""
from __future__ import annotations

import time


class Clock:
    def now(self) -> float:
        return time.time()
