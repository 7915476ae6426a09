"""The service facade: the one object the front-ends (HTTP, MCP) call; it alone knows the runtime and the actors.

The errors the front-ends map are all importable from here. No method calls Memory on the caller's thread:
Memory's health and the queue are the background reads' last answers.
"""
from __future__ import annotations

import contextlib
from typing import Any, Optional

import pykka

from actors.supervisor import ChildDown, ChildRunning, UnknownChild
from actors.replay import starter
from hippocampus.config import names, redact
from hippocampus.replay import service as replays
from hippocampus.status.lists import event_say, restart_words, result, run_words
from hippocampus.status.cache import StatusCache
from hippocampus.status.tally import Tally
from hippocampus.status.read import build_status, built_from
from hippocampus.status.watch import MEMORY_FIRST
from hippocampus.status.words import times_said
from hippocampus.cycle.lock import Busy  # noqa: F401
from hippocampus.replay.run import NoPacket, NotAllowed  # noqa: F401
from hippocampus.replay.service import ReplayBusy  # noqa: F401
from hippocampus.stopping import ServiceStopping
from hippocampus.store.voice import WHY_CHARS, VoiceError, VoiceStorageError  # noqa: F401



class FrontError(Exception):
    """What a front-end tells the person, as it is."""


class MemoryDown(FrontError): pass          # noqa: E701
class ActorDown(FrontError): pass           # noqa: E701
class StillRunning(FrontError): pass        # noqa: E701
class UnknownActor(FrontError): pass        # noqa: E701
class ActorRunning(FrontError): pass        # noqa: E701
class OtherCopy(FrontError): pass           # noqa: E701 - another copy of the service holds it
class UnknownEvent(FrontError): pass        # noqa: E701


class VoiceOff(FrontError):
    def __init__(self) -> None:
        super().__init__("the voice card is opt-in and off: set voice: {enabled: true} in the yaml (or "
                         "--voice-card) to let the main model write one")


def said(row: dict, words=run_words) -> dict:
    """A history row or an event with its words, and each "HH:MM" in them as its epoch (the viewer shows it
    in the person's clock)."""
    with times_said() as times:
        say = words(row)
    return {**row, "say": say, "times": times}


class Front:
    def __init__(self, runtime) -> None:
        self.rt = runtime
        self.replays = replays.Replays(runtime.ctx, starter(runtime.replay))     # run on the replay actor
        self._queue = runtime.queue
        self._status = StatusCache(lambda: build_status(runtime), lambda: built_from(runtime))
        self.tally = Tally()
        runtime.events.subscribe(self.tally.seen)

    def status(self) -> dict:
        self.rt.looks.look()
        return self._status.status()

    def status_body(self) -> bytes:
        """GET /status's JSON, encoded once per change of what it is built from. A look: while someone looks,
        the watches read Memory and the model on every beat (runtime.looks), never on this thread."""
        self.rt.looks.look()
        return self._status.body()

    def memory(self) -> dict:
        return self.rt.board.get("memory_health") or MEMORY_FIRST

    def health(self) -> dict:
        return {"ok": True, "memory_reachable": bool(self.memory()["reachable"])}

    def metrics(self) -> dict:
        """The counts since start and the published facts /metrics serves; no Memory call."""
        lifecycle = self.rt.board.get("lifecycle") or {}
        return {"counts": self.tally.counts(), "model_up_seconds": lifecycle.get("up_seconds_total") or 0.0,
                "last_sleep_ok_at": (self.rt.board.get("state") or {}).get("last_sleep_ok_at"),
                "memory_reachable": bool(self.memory()["reachable"]),
                "chain_open": bool((self.rt.board.get("snapshot") or {}).get("chain_open"))}

    def history(self, limit: int) -> list:
        rows = list(reversed((self.rt.board.get("state") or {}).get("history") or []))[:limit]
        return redact.deep([said(r) for r in rows])

    def events(self, limit: int, type_: Optional[str] = None) -> list:
        found = [said(e, event_say) for e in self.rt.events.list(limit=limit, type_=type_)]
        if type_ and not found and type_ not in names.EVENTS:    # a misspelling is not "none of them"
            raise UnknownEvent(names.not_an_event(type_))
        return found

    def queue_view(self) -> dict:
        """The queue watch's last view: Memory down, the last good read's drafts with `as_of` and `error`."""
        self.rt.looks.look()
        self._recheck_queue()
        seen = dict(self._queue.published() or {})
        if seen.get("error"):
            seen["error"] = self._memory_words(seen["error"], "read")
        return seen

    def actors(self) -> dict:
        return self.rt.board.get("actors") or {}

    @property
    def now(self) -> float:
        return self.rt.ctx.clock.now()

    def sleep(self, without_brief: bool = False) -> dict:
        return self._cycle("sleep", lambda tok: self.rt.sleeper().sleep(tok, not without_brief))

    def tend(self) -> dict:
        return self._cycle("tend", lambda tok: self.rt.chain().tend(tok))

    def check(self) -> dict:
        return self._cycle("check", lambda tok: self.rt.sleeper().check(tok))

    def nudge(self) -> dict:
        return self.rt.nudge()

    def _cycle(self, what: str, ask) -> dict:
        """Memory seen down is refused here; one gone down since the last look is found by the actor."""
        seen = self.memory()
        if seen["reachable"] is False and not seen.get("not_memory"):   # not Memory at all: the report says so
            raise MemoryDown(self._memory_words(seen["error"], "started"))
        cfg = self.rt.cfg
        timeout = cfg.model.timeout_seconds * 4 + cfg.memory.timeout_seconds * 4 + 60
        try:
            report = self.rt.request(what, ask, timeout=timeout)
        except pykka.Timeout:
            raise StillRunning(f"the {what} is still running; the status shows its progress") from None
        except pykka.ActorDeadError as exc:
            if self.rt.stopping:
                raise ServiceStopping() from None
            raise ActorDown(f"nothing was started: {exc}; restarting the actor brings it back") from None
        if report.get("status") == "memory_down":      # Memory went down since the watch last looked
            raise MemoryDown(self._memory_words(report.get("error") or "no answer", "started"))
        self._recheck_queue()
        return {**report, "say": result(what, report)}

    def _recheck_queue(self) -> None:
        """The queue watch reads again on its next beat."""
        with contextlib.suppress(pykka.ActorDeadError):
            self._queue().recheck.defer()

    def _memory_words(self, error: str, verb: str) -> str:
        return (f"SerenMemory at {redact.url(self.rt.ctx.memory.url)} is not answering ({error}); nothing was {verb}. "
                "The hippocampus holds nothing itself: it needs Memory up")

    def restart(self, name: str, force: bool = False) -> dict:
        """Ask the supervisor for a restart and answer at once: it restarts in the background (a busy actor's
        work has a while to end first); /actors, /status and the log say when it is back."""
        name = (name or "").strip()
        try:
            self.rt.restart(name, force)
        except (ChildDown, UnknownChild, ChildRunning) as exc:
            raise {ChildDown: ActorDown, UnknownChild: UnknownActor, ChildRunning: ActorRunning}[type(exc)](
                str(exc)) from None
        return {"actor": name, "state": "restarting", "say": restart_words(name)}

    def voice_card(self):
        """The voice card (store.voice.VoiceCard: current, set, history, max_chars); VoiceOff while it is off."""
        if self.rt.ctx.voice is None:
            raise VoiceOff()
        return self.rt.ctx.voice

    @property
    def voice_enabled(self) -> bool:
        return self.rt.ctx.voice is not None

    def quality(self) -> dict:
        return replays.report(self.rt.board.get(replays.BOARD_KEY))

    def quality_brief(self) -> dict:
        return replays.brief(self.rt.board.get(replays.BOARD_KEY))

    def config(self) -> Any:
        return self.rt.cfg
