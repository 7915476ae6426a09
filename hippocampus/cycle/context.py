"""What the domain objects share: config, clients, the clock, state, events and the model gate; and what /status
shows of them, published to the board by the object that changes it (wire)."""
from __future__ import annotations

import functools
import logging
import threading
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any, Callable, Optional

from hippocampus.clock import Clock
from hippocampus.config import Config
from hippocampus.cycle.lock import CycleLock
from hippocampus.cycle.ticks import Ticks
from hippocampus.store.events import EventLog
from hippocampus.store.scrub import Scrubs
from hippocampus.memory import MemoryClient
from hippocampus.model.client import ModelClient
from hippocampus.store.state import State
from hippocampus.stopping import StopFlag

log = logging.getLogger(__name__)


def always_up() -> SimpleNamespace:
    """The model gate (ensure, release, handover, held_until) of an unmanaged model: nothing to start or stop."""
    return SimpleNamespace(ensure=lambda: None, release=lambda busy_seconds: None, handover=lambda: False,
                           held_until=lambda now: None)


class Progress(dict):
    """What a running sleep is doing, published on every change."""
    publish = staticmethod(lambda progress: None)

    def update(self, *args, **kw) -> None:
        super().update(*args, **kw)
        self.publish(dict(self))

    def clear(self) -> None:
        super().clear()
        self.publish({})


@dataclass
class Context:
    cfg: Config
    memory: MemoryClient
    state: State
    events: EventLog
    clock: Clock
    model: Optional[ModelClient] = None
    gate: Any = field(default_factory=always_up)
    voice: Any = None            # hippocampus.voice.VoiceCard when enabled
    cycle: CycleLock = field(default_factory=CycleLock)
    ticks: Ticks = field(default_factory=Ticks)            # whether a tick runs, how many ended, the last one
    progress: Progress = field(default_factory=Progress)   # what a running sleep is doing, for /status
    snapshot: Any = None         # the last Snapshot of Memory's drafts and briefs (last_snapshot)
    stopping: StopFlag = field(default_factory=StopFlag)   # set once when the service stops
    others: set = field(default_factory=set)       # the other copies' claims already said in the log
    copies_alone: bool = False       # no other copy seen on this Memory at the last read (cycle/copies.py)
    copies_announced: bool = False   # this process's "copy" note is in Memory
    announcing: Any = field(default_factory=threading.Lock)     # one "copy" note posted at a time (copies.py)
    capture: list = field(default_factory=list)    # the running sleep's or redraft's model calls (capture.py)
    scrubs: Scrubs = field(default_factory=Scrubs)  # what this process remembers of its scrubs (store/scrub.py)
    meter: Any = None                # the running night's budget.Meter (None: no budget counts the calls)
    publish: Callable[[str, Any], None] = lambda key, view: None     # the board's put (wire)

    @property
    def last_snapshot(self) -> Any:
        return self.snapshot

    @last_snapshot.setter
    def last_snapshot(self, snap: Any) -> None:
        self.snapshot = snap
        self.publish("snapshot", None if snap is None else snap.summary())

    def wire(self, put: Callable[[str, Any], None]) -> None:
        """Have each object /status shows publish its view to the board (put(key, view)) on every change, from
        now: the state, the cycle's holder, the ticks, the sleep's progress, the last snapshot, the log's, the voice
        card's and what the model server said of itself."""
        self.publish = put
        owners = {"state": (self.state, self.state.view()), "cycle": (self.cycle, self.cycle.describe()),
                  "ticks": (self.ticks, self.ticks.view()),
                  "progress": (self.progress, dict(self.progress)),
                  "events": (self.events, self.events.write_error)}
        if self.voice is not None:
            owners["voice"] = (self.voice, self.voice.view())
        if self.model is not None:
            owners["model_learned"] = (self.model.learned, self.model.learned.view())
        for key, (owner, now) in owners.items():
            owner.publish = functools.partial(put, key)
            put(key, now)
        self.last_snapshot = self.snapshot

    def emit(self, type_: str, **fields: Any) -> dict:
        return self.events.emit(type_, **fields)

    def emit_once(self, type_: str, key: str, **fields: Any) -> Optional[dict]:
        """Emit unless the log holds one of this type with the same `key` field (a step finished again after a
        crash says once what it did)."""
        if any(e.get(key) == fields[key] for e in self.events.list(limit=self.events.keep, type_=type_)):
            log.info("%s for %s was already said before the restart", type_, fields[key])
            return None
        return self.emit(type_, **fields)

    @property
    def mechanical(self) -> bool:
        return self.model is None or not self.cfg.model.configured

    def voice_block(self) -> tuple:
        """(the card's preamble, its version) or ("", None)."""
        block = self.voice.block() if self.voice is not None else ""
        return (block, self.voice.version()) if block else ("", None)
