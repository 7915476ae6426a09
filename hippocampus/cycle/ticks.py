"""The ticks' record: whether one runs, how many ended, and the last one's outcome. The scheduler marks a tick
started; the thread that ends it (the sleeper's, or the chain's when the sleeper is down) marks it ended; both
publish to the board (Context.wire), so the end of a tick is never told back to the scheduler."""
from __future__ import annotations

import threading
from typing import Optional


class Ticks:
    publish = staticmethod(lambda view: None)

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.ticking, self.count, self.last = False, 0, None

    def view(self) -> dict:
        return {"ticking": self.ticking, "ticks": self.count, "last_tick": self.last}

    def started(self) -> None:
        self._set(True)

    def ended(self, last: Optional[dict] = None) -> None:
        """last: the tick's outcome; None: it never ran (the chain was down), so it is not counted."""
        self._set(False, last)

    def _set(self, ticking: bool, last: Optional[dict] = None) -> None:
        with self._lock:
            self.ticking = ticking
            if last is not None:
                self.count, self.last = self.count + 1, last
            view = self.view()
        self.publish(view)
