"""The event log: one entry per thing that happened, kept on the service.

Bounded (the newest `keep`), persisted atomically beside the state file so it
survives a restart, and readable newest first with a type filter. Delivery and
ripple outcomes are recorded on the event after the fact (`annotate`).
"""
from __future__ import annotations

import itertools
import threading
from pathlib import Path
from typing import Any, Callable, Optional

from .clock import Clock
from . import jsonfile
from .jsonfile import read_or_set_aside

Listener = Callable[[dict], None]


class EventLog:
    def __init__(self, path: Optional[Path], clock: Clock, keep: int = 500):
        self.path = Path(path) if path else None
        self.clock = clock
        self.keep = keep
        self._lock = threading.RLock()          # held briefly: never across a disk write
        self._write_lock = threading.Lock()
        self._events: list = []
        self._listeners: list = []
        self.write_error: Optional[str] = None
        if self.path:
            loaded = read_or_set_aside(self.path, "events")
            if isinstance(loaded, dict) and isinstance(loaded.get("events"), list):
                self._events = [e for e in loaded["events"] if isinstance(e, dict)][-keep:]
        start = max((int(e.get("seq", 0)) for e in self._events), default=0) + 1
        self._seq = itertools.count(start)

    def subscribe(self, listener: Listener) -> None:
        self._listeners.append(listener)

    def emit(self, type_: str, **fields: Any) -> dict:
        with self._lock:
            event = {"type": type_, "at": self.clock.now(), "seq": next(self._seq), **fields}
            self._events.append(event)
            del self._events[:-self.keep]
        self._save()
        for listener in list(self._listeners):
            try:
                listener(event)
            except Exception:  # noqa: BLE001 - a listener never fails the emitter
                pass
        return event

    def annotate(self, seq: int, **fields: Any) -> None:
        with self._lock:
            for e in reversed(self._events):
                if e.get("seq") == seq:
                    e.update(fields)
                    break
            else:
                return
        self._save()

    def list(self, limit: int = 100, type_: Optional[str] = None) -> list:
        with self._lock:
            picked = [dict(e) for e in reversed(self._events) if type_ is None or e.get("type") == type_]
        return picked[:max(0, limit)]

    def _save(self) -> None:
        if not self.path:
            return
        with self._write_lock:
            with self._lock:
                raw = jsonfile.encode({"events": self._events})
            try:
                jsonfile.write_text_atomic(self.path, raw)
                self.write_error = None
            except OSError as exc:
                self.write_error = (f"the event log {self.path} could not be written ({exc}); "
                                    "events are kept in memory")
