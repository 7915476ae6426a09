"""The running service: the shared plain objects, the supervisor and its six children.

Routes and the MCP tools talk to the service only through this object: they tell
or ask an actor by name (through the supervisor's registry, never a stale ref),
take the cycle lock before asking, and read status from the board.
"""
from __future__ import annotations

import contextlib
import logging
import threading
from typing import Any, Callable, Optional

import pykka

from hippocampus.store import private
from hippocampus.clock import Clock
from hippocampus.config import Config
from hippocampus.cycle.context import Context
from hippocampus.store.events import FILE_NAME as EVENTS_FILE
from hippocampus.store.events import EventLog
from hippocampus.memory import MemoryClient
from hippocampus.model.client import ModelClient
from hippocampus.ripple.webhook import Webhook
from hippocampus.ripple.fire import Ripple
from hippocampus.store.state import State

from actors.board import Board
from actors.chain import ChainActor
from actors.model_gate import LifecycleGate
from actors.lifecycle import LifecycleActor
from actors.messages import Ping, Publish, Wake
from actors.notifier import NotifierActor
from actors.quality import QualityActor
from actors.ripple import RippleActor
from actors.scheduler import SchedulerActor
from actors.sleeper import SleeperActor
from actors.supervisor import ChildSpec, Registry, Supervisor

log = logging.getLogger("hippocampus.runtime")
NUDGE_BURST_SECONDS = 60.0      # nudges closer together than this (nothing that matters between) are one event

CHILDREN = [
    ChildSpec("notifier", NotifierActor),
    ChildSpec("ripple", RippleActor),
    ChildSpec("lifecycle", LifecycleActor),
    ChildSpec("chain", ChainActor),
    ChildSpec("sleeper", SleeperActor),
    ChildSpec("scheduler", SchedulerActor, ticks=True),
    ChildSpec("quality", QualityActor, ticks=True),      # the quality report, read in the background
]


class Nudges:
    """'Your turn': set by a nudge, taken by the tick it causes. A burst is one flag, so one tick."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pending = False

    def set(self) -> None:
        with self._lock:
            self._pending = True

    def pending(self) -> bool:
        with self._lock:
            return self._pending

    def take(self) -> bool:
        with self._lock:
            was, self._pending = self._pending, False
            return was


class Runtime:
    def __init__(self, cfg: Config, *, clock: Optional[Clock] = None, memory: Optional[MemoryClient] = None):
        self.cfg = cfg
        clock = clock or Clock()
        state_path = cfg.sleep.resolved_state_path()
        private.prepare(state_path.parent)      # 0700, and our files in it 0600
        state = State(state_path)
        events = EventLog(state_path.with_name(EVENTS_FILE), clock, keep=cfg.events.keep)
        memory = memory or MemoryClient(cfg.memory.url, cfg.memory.resolve_bearer(), cfg.memory.timeout_seconds)
        model = ModelClient(cfg.model) if cfg.model.configured else None
        voice = None
        if cfg.voice.enabled:
            from hippocampus.store.voice import VoiceCard

            voice = VoiceCard(state_path.with_name("voice.json"), cfg.voice.max_chars, clock)
        self.ctx = Context(cfg=cfg, memory=memory, state=state, events=events, clock=clock, model=model,
                           gate=LifecycleGate(self), voice=voice)
        self.board = Board()
        self.registry = Registry()
        self.faults: dict = {}
        self.nudges = Nudges()
        self.ctx.cycle.on_release = self._cycle_released
        self.tick_flags: dict = {}      # name -> threading.Event: a Tick is queued (the ticker coalesces)
        self.ripple = Ripple(cfg.ripple, log_dir=cfg.state_dir)
        self.webhook = Webhook(cfg.notify)
        self.supervisor: Optional[pykka.ActorRef] = None
        events.subscribe(lambda e: self.tell("notifier", Publish(e)))

    @property
    def events(self) -> EventLog:
        return self.ctx.events

    # ------------------------------------------------------------ life
    def start(self) -> "Runtime":
        self.supervisor = Supervisor.start(self, CHILDREN)
        # start() returns before the supervisor's on_start has started the children; an ask is
        # answered only after it, so the registry is full when the routes open
        self.supervisor.ask(Ping(), timeout=60)
        return self

    @property
    def stopping(self) -> bool:
        return self.ctx.stopping.is_set()

    def begin_stop(self) -> None:
        """The first step of a stop (any thread, at once): no new step starts, and a model call in flight
        is abandoned, so the actor waiting on it is free in milliseconds instead of when the model answers."""
        if self.stopping:
            return
        self.ctx.stopping.set()
        cut = self.ctx.model.abandon() if self.ctx.model is not None else 0
        log.info("stopping: no new sleep or tend starts%s", "; the model call in flight was abandoned "
                 "(the step waiting on it is recorded as interrupted)" if cut else "")

    def stop(self, timeout: float = 20.0) -> None:
        if self.supervisor is not None:
            try:
                self.supervisor.stop(block=True, timeout=timeout)
            except (pykka.ActorDeadError, pykka.Timeout):
                pass
            self.supervisor = None
        self.ripple.shutdown()

    # ------------------------------------------------------------ messaging
    def tell(self, name: str, message: Any) -> bool:
        ref = self.registry.get(name)
        if ref is None:
            return False
        try:
            ref.tell(message)
            return True
        except pykka.ActorDeadError:
            return False

    def ask(self, name: str, message: Any, timeout: Optional[float] = 5.0) -> Any:
        ref = self.registry.get(name)
        if ref is None:
            raise pykka.ActorDeadError(f"the {name} actor is down (restarting or failed)")
        return ref.ask(message, timeout=timeout)

    @contextlib.contextmanager
    def holding(self, token, what: str):
        """Inside a handler: the lock the caller took, or take it here. None starts once the stop has come."""
        tok = token if token is not None else self.ctx.cycle.enter(what)
        try:
            self.ctx.stopping.check(f"the {what} was not started")
            yield tok
        finally:
            self.ctx.cycle.leave(tok)

    def request(self, what: str, actor: str, make: Callable[[Any], Any], timeout: Optional[float]) -> Any:
        """Take the cycle lock here (Busy at once if it is held) and hand it to the actor's handler."""
        self.ctx.stopping.check(f"the {what} was not started")
        tok = self.ctx.cycle.enter(what)
        ref = self.registry.get(actor)
        if ref is None:
            self.ctx.cycle.leave(tok)
            raise pykka.ActorDeadError(f"the {actor} actor is down (restarting or failed): see /actors")
        try:
            return ref.ask(make(tok), timeout=timeout)
        except pykka.ActorDeadError:
            self.ctx.cycle.leave(tok)
            raise

    def _cycle_released(self, what: str) -> None:
        """A nudge that came while the cycle was held (a tick, or a sleep, tend or check started over HTTP
        or MCP) is not lost: it causes its tick now that the holder is done."""
        if self.nudges.pending():
            self.tell("scheduler", Wake())

    def nudge(self) -> dict:
        self.nudges.set()
        woke = self.tell("scheduler", Wake())
        self.ctx.events.bump("nudged", within=NUDGE_BURST_SECONDS, woke=woke)   # a burst is one event
        return {"ok": True, "woke": woke,
                "message": "carrying on now" if woke else "noted; the next tick carries on"}

    def inject_fault(self, name: str, where: str = "tell") -> bool:
        """Test-only: make a child crash (a tell that raises) or die in its next on_start.
        Raises FaultsOff unless a test has turned the fault hooks on (actors.faults.allow())."""
        from actors.faults import Crash, check

        check(name, where)
        if where == "on_start":
            self.faults[f"{name}:on_start"] = True
            return self.tell(name, Crash("on_start"))
        return self.tell(name, Crash(where))

