"""The service facade: the one typed object the front-ends (HTTP resources, MCP tools) call.

It alone knows actor names and message classes. It raises a small set of errors, which each front-end
maps once: Busy (the cycle is held), MemoryDown, ActorDown, ServiceStopping, StillRunning, UnknownActor,
ActorRunning, VoiceOff (and the voice card's own VoiceError / VoiceStorageError).
Like Mopidy's frontends seeing only its CoreProxy.
"""
from __future__ import annotations

from typing import Any, Optional

import pykka

from actors.messages import Check, RestartChild, Sleep, Tend
from hippocampus.cycle.lock import Busy  # noqa: F401 - re-exported for the front-ends
from hippocampus.config import redact
from hippocampus.memory import MemoryError_
from hippocampus.status.lists import event_say
from hippocampus.status.cache import StatusCache
from hippocampus.status.read import build_status, built_from
from hippocampus.status.reports import restart_words, result, run_words
from hippocampus.status.watch import MemoryWatch, ModelWatch
from hippocampus.stopping import ServiceStopping


class FrontError(Exception):
    """What a front-end tells the person, as it is."""


class MemoryDown(FrontError):
    pass


class ActorDown(FrontError):
    pass


class StillRunning(FrontError):
    pass


class UnknownActor(FrontError):
    pass


class ActorRunning(FrontError):
    pass


class VoiceOff(FrontError):
    def __init__(self) -> None:
        super().__init__("the voice card is opt-in and off: set voice: {enabled: true} in the yaml (or "
                         "--voice-card) to let the main model write one")


class Front:
    def __init__(self, runtime) -> None:
        self.rt = runtime
        self.memory_watch = MemoryWatch(runtime.ctx.memory)
        self.model_watch = ModelWatch(runtime.cfg.model)
        for watch in (self.memory_watch, self.model_watch):
            watch.snapshot()            # the first look starts now, in the background
        self._status = StatusCache(lambda: build_status(runtime, self.memory_watch, self.model_watch),
                                   lambda: built_from(runtime, self.memory_watch, self.model_watch))

    # ------------------------------------------------------------ reading
    def status(self) -> dict:
        return self._status.status()

    def status_body(self) -> bytes:
        """GET /status's JSON, encoded once per change of what the status is built from."""
        return self._status.body()

    def health(self) -> dict:
        return {"ok": True, "memory_reachable": bool(self.memory_watch.refresh()["reachable"])}

    def history(self, limit: int) -> list:
        rows = list(reversed(self.rt.ctx.state.get("history") or []))[:limit]
        return redact.deep([{**r, "say": run_words(r)} for r in rows])

    def events(self, limit: int, type_: Optional[str] = None) -> list:
        """Newest first, each with its words (`say`: its facts and what the webhook and the ripple did)."""
        return [{**e, "say": event_say(e)} for e in self.rt.events.list(limit=limit, type_=type_)]

    def queue(self) -> list:
        """What waits for review in Memory (raises MemoryDown)."""
        try:
            return self.rt.ctx.memory.drafts("pending", limit=50)
        except MemoryError_ as exc:
            raise MemoryDown(self._memory_words(exc, "read")) from None

    def actors(self) -> dict:
        return self.rt.board.get("actors") or {}

    @property
    def now(self) -> float:
        return self.rt.ctx.clock.now()

    # ------------------------------------------------------------ the cycle
    def sleep(self, without_brief: bool = False) -> dict:
        return self._cycle("sleep", "sleeper", lambda tok: Sleep(not without_brief, tok))

    def tend(self) -> dict:
        return self._cycle("tend", "chain", lambda tok: Tend(True, tok))

    def check(self) -> dict:
        return self._cycle("check", "sleeper", lambda tok: Check(tok))

    def nudge(self) -> dict:
        return self.rt.nudge()

    def _cycle(self, what: str, actor: str, make) -> dict:
        """Memory first (the hippocampus holds nothing itself), then the cycle lock, then the actor."""
        try:
            self.rt.ctx.memory.health()
        except MemoryError_ as exc:
            raise MemoryDown(self._memory_words(exc, "started")) from None
        cfg = self.rt.cfg
        timeout = cfg.model.timeout_seconds * 4 + cfg.memory.timeout_seconds * 4 + 60
        try:
            report = self.rt.request(what, actor, make, timeout=timeout)
        except pykka.Timeout:
            raise StillRunning(f"the {what} is still running; the status shows its progress") from None
        except pykka.ActorDeadError as exc:
            if self.rt.stopping:
                raise ServiceStopping() from None
            raise ActorDown(f"nothing was started: {exc}; restarting the actor brings it back") from None
        return {**report, "say": result(what, report)}

    def _memory_words(self, exc: Exception, verb: str) -> str:
        return (f"SerenMemory at {redact.url(self.rt.ctx.memory.url)} is not answering ({exc}); nothing was {verb}. "
                "The hippocampus holds nothing itself: it needs Memory up")

    # ------------------------------------------------------------ actors
    def restart(self, name: str, force: bool = False) -> dict:
        sup = self.rt.supervisor
        if sup is None:
            raise ActorDown("the supervisor is not running; nothing was restarted")
        try:
            out = sup.ask(RestartChild((name or "").strip(), force), timeout=15)
        except (pykka.Timeout, pykka.ActorDeadError) as exc:
            raise ActorDown(f"the supervisor did not answer ({type(exc).__name__}); nothing was restarted") from None
        status = out.pop("status", None)
        if status == 404:
            raise UnknownActor(out.get("detail"))
        if status == 409:
            raise ActorRunning(out.get("detail"))
        return {**out, "say": restart_words((name or "").strip(), out)}

    # ------------------------------------------------------------ the voice card
    def _card(self):
        if self.rt.ctx.voice is None:
            raise VoiceOff()
        return self.rt.ctx.voice

    def voice(self) -> dict:
        return self._card().current() or {"version": 0, "text": None}

    def set_voice(self, text: str, why: Optional[str]) -> dict:
        return self._card().set(text, why)

    def voice_history(self, limit: int) -> list:
        return self._card().history(limit)

    @property
    def voice_enabled(self) -> bool:
        return self.rt.ctx.voice is not None

    def config(self) -> Any:
        return self.rt.cfg
