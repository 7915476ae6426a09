"""What this process learned of one model server, kept on its client rather than in module globals: whether it
refused the answer's JSON schema (model.structured: auto) and the write mode its size chose (model.write: auto).
Published to the board on every change (Context.wire), so /status reads it there; a restart asks again (the
server may have been upgraded or swapped)."""
from __future__ import annotations

import threading
from typing import Optional


class Learned:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.refused: Optional[str] = None      # what the server said when it refused the schema
        self.chosen: Optional[dict] = None      # {"mode", "why", "n_params"}: model.write: auto's pick
        self.publish = lambda view: None

    def view(self) -> dict:
        return {"refused": self.refused, "chosen": self.chosen}

    def remember(self, what: str, value) -> bool:
        """Set `what` (refused or chosen); True the first time, so the log says it once."""
        with self._lock:
            first = getattr(self, what) is None
            setattr(self, what, value)
            view = self.view()
        self.publish(view)
        return first
