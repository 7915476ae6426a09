"""The watches: background reads, each in an actor of its own, published to the board on the supervisor's beat.

A read that hangs delays only its own watch's next view. A watch reads when due (every `every` seconds, on
the next beat after a Recheck, or on every beat while someone looks: runtime.looks) and puts only a new view
on the board.
"""
from __future__ import annotations

import logging
import time
from typing import Optional

import pykka
from pykka.typing import ActorMemberMixin, proxy_method

from hippocampus.cycle import copies
from hippocampus.model import fit
from hippocampus.transport_words import in_words
from hippocampus.ripple.check import service_view
from hippocampus.status import watch as health
from hippocampus.status.read import CHECKING

from actors.base import Supervised

log = logging.getLogger(__name__)


class WatchActor(Supervised):
    wants_beat = True
    every = 0.0             # seconds between reads; 0: on the first beat and after each Recheck only
    at_start = False        # read once in on_start, so the first answer of /health already knows
    first: dict = {}        # what the board shows before the first read
    looked_at = False       # read on every beat while someone looks (a viewer, a /status client)
    stop_waits = False      # a read only feeds the board: the service's stop never waits on it

    def __init__(self, supervisor, runtime) -> None:
        super().__init__(supervisor, runtime)
        self.view: Optional[dict] = None
        self.asked = True
        self.last = 0.0
        self._published = None

    def read(self) -> dict:
        raise NotImplementedError

    def due(self) -> bool:
        return (self.asked or (self.looked_at and self.rt.looks.watched())
                or (self.every > 0 and time.monotonic() - self.last >= self.every))

    def on_start(self) -> None:
        if self.at_start:
            self._read()
        super().on_start()

    def on_beat(self, at: float) -> None:
        if self.due():
            self._read()

    def recheck(self) -> None:
        """Read again on the next beat."""
        self.asked = True

    def _read(self) -> None:
        self.asked, self.last = False, time.monotonic()
        self.view = self.read()

    def snapshot(self) -> dict:
        return self.first if self.view is None else self.view

    def say(self, change: Optional[health.Change]) -> None:
        """A flip of what this watch reads: one log line and one event."""
        if change is not None:
            log.log(change.level, "%s", change.line)
            self.rt.events.emit(change.event, **change.fields)

    def publish(self) -> None:
        if self.view is None or self.view is not self._published:
            self._published = self.view
            super().publish()


class MemoryWatch(WatchActor):
    name = "memory_health"
    every = 5.0
    at_start = True
    first = health.MEMORY_FIRST
    looked_at = True

    def __init__(self, supervisor, runtime) -> None:
        super().__init__(supervisor, runtime)
        self.reach = health.Reach("Memory", "memory", runtime.cfg.memory.url, health.MEMORY_WAITS)

    def read(self) -> dict:
        view = health.memory_health(self.rt.ctx.memory, self.view)
        if self.rt.stopping:        # the stop cuts Memory calls: a read it cut says nothing of Memory
            return view if self.view is None else self.view
        self.say(self.reach.seen(bool(view["reachable"]), view["error"], view["checked_at"]))
        if view["reachable"] and not self.rt.ctx.copies_announced:
            copies.announce(self.rt.ctx)     # at start (the first read), so other copies know of this one at once
        return view


class ModelWatch(WatchActor):
    """Is a model this service does not start answering; and while the model is up, does the largest prompt
    fit its context ("model_fit"): measured as it comes up and every FIT_SECONDS while it stays up."""
    name = "model_health"
    every = 10.0
    first = health.MODEL_FIRST
    looked_at = True
    FIT_SECONDS = 60.0

    def __init__(self, supervisor, runtime) -> None:
        super().__init__(supervisor, runtime)
        self._fit_for, self._fit_at = None, 0.0
        self.reach = health.Reach("The model", "model", runtime.cfg.model.url, health.MODEL_WAITS)

    def due(self) -> bool:
        return health.model_watched(self.rt.cfg.model) and super().due()

    def read(self) -> dict:
        view = health.model_health(self.rt.cfg.model)
        self.say(self.reach.seen(bool(view["answering"]), view["error"], view["checked_at"]))
        return view

    def on_beat(self, at: float) -> None:
        super().on_beat(at)
        up = self._up()
        if up is None:
            self._fit_for = None        # measured again as soon as it is back
        elif up != self._fit_for or time.monotonic() - self._fit_at >= self.FIT_SECONDS:
            self._fit_for, self._fit_at = up, time.monotonic()
            self.rt.board.put("model_fit", fit.measure(self.rt.cfg))

    def _up(self):
        """Which server is up now, or None."""
        cfg = self.rt.cfg.model
        if not cfg.configured:
            return None
        if health.model_watched(cfg):
            return "watched" if (self.view or {}).get("answering") else None
        lc = self.rt.board.get("lifecycle") or {}
        return ("managed", lc.get("pid")) if lc.get("state") == "ready" else None


class WakeupWatch(WatchActor):
    """Would a wake-up work: read on the first beat, after each ripple, and every minute, so a fix (a program
    installed, a path or a receiver put right) clears the headline without waiting for a ripple. A minute: the
    read is a few local look-ups, at most a GET or two (5 s each at worst) and a `sudo -n -l`, in its own actor,
    and a receiver sees at most one GET a minute from it."""
    name = "wakeup"
    first = CHECKING
    every = 60.0

    def read(self) -> dict:
        try:
            return service_view(self.rt.cfg)
        except Exception as exc:  # noqa: BLE001 - the check itself failing is shown, never raised
            log.exception("the wake-up check failed")
            return {"ok": None, "summary": f"the wake-up check failed: {in_words(exc)}",
                    "lines": [], "checked_at": time.time()}


class QueueWatch(WatchActor):
    """What waits for review in Memory (GET /queue) and the briefs open there, and another copy's newer sleep
    (bedtime): read at start, on the beat after a sleep or tend, and on every beat while someone looks; Memory
    down keeps the last answer, "as of" then."""
    name = "queue"
    at_start = True
    looked_at = True
    first = health.QUEUE_FIRST

    def read(self) -> dict:
        # the chains as Memory holds them only until a check has read them (the narrator takes its snapshot then)
        view = health.pending_drafts(self.rt.ctx.memory, self.view, chains=self.rt.board.get("snapshot") is None)
        if not view["error"] and self.rt.looks.watched():     # only a person looking needs the bedtime now:
            copies.read_slept(self.rt.ctx, view["drafts"])    # another copy's sleep moves the bedtime here too
        return view


class WatchProxy(ActorMemberMixin, pykka.ActorProxy[WatchActor]):
    recheck = proxy_method(WatchActor.recheck)
    ping = proxy_method(WatchActor.ping)
