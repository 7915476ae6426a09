"""The running service: the shared plain objects (context, config, board, registry), the supervisor and its
children, and a typed proxy for each child; the facade (hippocampus/front.py) reaches the service only here.
"""
from __future__ import annotations

import contextlib
import logging
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
from hippocampus.store.state import State
from hippocampus.status.looks import Looks

from actors import faults
from actors.board import Board
from actors.chain import ChainActor
from actors.lifecycle import LifecycleActor
from actors.messages import Ping
from actors.notifier import NotifierActor
from actors.proxies import Chain, Lifecycle, Notifier, Proxy, RippleProxy, Scheduler, Sleeper, Watch
from actors.quality import QualityActor
from actors.replay import ReplayActor
from actors.ripple import RippleActor
from actors.scheduler import SchedulerActor
from actors.sleeper import SleeperActor
from actors.supervisor import Registry, Supervisor
from actors.watch import MemoryWatch, ModelWatch, QueueWatch, WakeupWatch

log = logging.getLogger("hippocampus.runtime")
NUDGE_BURST_SECONDS = 60.0      # nudges closer together than this (nothing that matters between) are one event
FIRST_READ_SECONDS = 2.0        # start-up waits this long at most for the first read of Memory's health

CHILDREN = [NotifierActor, RippleActor, LifecycleActor, ChainActor, SleeperActor, SchedulerActor,
            QualityActor, MemoryWatch, ModelWatch, WakeupWatch, QueueWatch, ReplayActor]      # started in this order


class Runtime:
    def __init__(self, cfg: Config, *, clock: Optional[Clock] = None, memory: Optional[MemoryClient] = None):
        self.cfg = cfg
        clock = clock or Clock()
        state_path = cfg.sleep.resolved_state_path()
        private.prepare(state_path.parent)      # 0700, and our files in it 0600
        self.folder = private.hold(state_path.parent)     # one service per state folder (FolderHeld)
        state = State(state_path)
        events = EventLog(state_path.with_name(EVENTS_FILE), clock, keep=cfg.events.keep)
        memory = memory or MemoryClient(cfg.memory.url, cfg.memory.resolve_bearer(), cfg.memory.timeout_seconds)
        model = ModelClient(cfg.model) if cfg.model.configured else None
        voice = None
        if cfg.voice.enabled:
            from hippocampus.store.voice import VoiceCard

            voice = VoiceCard(state_path.with_name("voice.json"), cfg.voice.max_chars, clock)
        self.ctx = Context(cfg=cfg, memory=memory, state=state, events=events, clock=clock, model=model, voice=voice)
        self.board = Board()
        self.ctx.wire(self.board.put)   # the plain objects publish what /status shows
        self.looks = Looks()            # a viewer or /status client looking: the watches read on every beat
        self.registry = Registry()
        self.faults: dict = {}          # test-only: "name:on_start" -> die in the next on_start
        self.tick_flags: dict = {}      # name -> threading.Event: a Tick is queued (the ticker coalesces)
        self.supervisor: Optional[pykka.ActorRef] = None
        proxy = lambda cls, name="": cls(self.registry, self.board, name)      # noqa: E731
        self.notifier, self.ripple = proxy(Notifier), proxy(RippleProxy)
        self.ctx.gate = self.lifecycle = Lifecycle(self.registry, self.board, cfg.model.lifecycle.ready_timeout_seconds,
                                                   self.ctx.stopping)
        self.chain, self.sleeper, self.scheduler = proxy(Chain), proxy(Sleeper), proxy(Scheduler)
        self.memory_health, self.wakeup, self.queue = (proxy(Watch, n) for n in ("memory_health", "wakeup", "queue"))
        self.ctx.cycle.on_release = lambda what: self.scheduler.released()
        events.subscribe(self.notifier.publish)

    @property
    def events(self) -> EventLog:
        return self.ctx.events

    def start(self) -> "Runtime":
        self.supervisor = Supervisor.start(self, CHILDREN)
        # an ask is answered only after the supervisor's on_start, so the registry is full when the routes open
        self.supervisor.ask(Ping(), timeout=60)
        self.memory_health.ping(FIRST_READ_SECONDS)     # so /health's first answer already knows Memory
        return self

    @property
    def stopping(self) -> bool:
        return self.ctx.stopping.is_set()

    def begin_stop(self) -> None:
        """The first step of a stop (any thread, at once): no new step starts, and a model call in flight
        is abandoned, so the actor waiting on it is free at once."""
        if self.stopping:
            return
        self.ctx.stopping.set()
        cut = self.ctx.model.abandon() if self.ctx.model is not None else 0
        log.info("stopping: no new sleep or tend starts%s", "; the model call in flight was abandoned "
                 "(the step waiting on it is recorded as interrupted)" if cut else "")

    def stop(self, timeout: float = 20.0) -> None:
        if self.supervisor is not None:
            with contextlib.suppress(pykka.ActorDeadError, pykka.Timeout):
                self.supervisor.stop(block=True, timeout=timeout)
            self.supervisor = None
        left = self.registry.estate("ripple").get("ripple")
        if left is not None:
            left.shutdown()     # a ripple actor that was down (failed) never ran its on_stop
        private.release(self.folder)

    def tell(self, name: str, message: Any) -> bool:
        """By name, for inject_fault; the service uses the proxies."""
        return Proxy(self.registry, self.board, name).tell(message)

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
        try:
            return Proxy(self.registry, self.board, actor).ask(make(tok), timeout=timeout)
        except pykka.ActorDeadError:
            self.ctx.cycle.leave(tok)
            raise

    def nudge(self) -> dict:
        woke = self.scheduler.wake()
        self.ctx.events.bump("nudged", within=NUDGE_BURST_SECONDS, woke=woke)   # a burst is one event
        return {"ok": True, "woke": woke,
                "message": "carrying on now" if woke else "noted; the next tick carries on"}

    def inject_fault(self, name: str, where: str = "tell") -> bool:
        """Test-only: make a child crash (a tell that raises) or die in its next on_start (else FaultsOff)."""
        if not faults.allowed():
            raise faults.FaultsOff(f"no fault injected into {name} ({where}): the fault hooks are test-only and off "
                                   f"(a test turns them on with actors.faults.allow())")
        if where == "on_start":
            self.faults[f"{name}:on_start"] = True
        return self.tell(name, faults.Crash(where))

