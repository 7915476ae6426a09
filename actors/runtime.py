"""The running service: the shared plain objects (context, config, board, registry), the supervisor and its
children, and a Child (its typed proxy) for each; the facade (hippocampus/front.py) reaches the service only here.
"""
from __future__ import annotations

import contextlib
import logging
import threading
import time
from typing import Callable, Optional, Sequence

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
from hippocampus.store.voice import VoiceCard
from hippocampus.status.looks import Looks

from actors.base import DOWN_OK, answer
from actors.board import Board
from actors.chain import ChainActor, ChainProxy
from actors.lifecycle import LifecycleActor
from actors import notifier
from actors.notifier import NotifierActor, NotifierProxy
from actors.proxies import Child, Gate, RippleChild, SchedulerChild
from actors.quality import QualityActor
from actors.replay import ReplayActor, ReplayProxy
from actors import ripple
from actors.ripple import RippleActor, RippleProxy
from actors.scheduler import SchedulerActor, SchedulerProxy
from actors.sleeper import SleeperActor, SleeperProxy
from actors.supervisor import ChildDown, Registry, Supervisor
from actors.watch import MemoryWatch, ModelWatch, QueueWatch, WakeupWatch, WatchProxy

log = logging.getLogger(__name__)
NUDGE_BURST_SECONDS = 60.0      # nudges closer together than this (nothing that matters between) are one event
FIRST_READ_SECONDS = 2.0        # start-up waits this long at most for the first read of Memory's health
RESTART_ANSWER_SECONDS = 10.0   # an operator's restart is answered at once: this long means the supervisor hangs
REPORT_AT_STOP_SECONDS = 2.0    # once the stop has come, a request waits this long at most for its actor's report
MEMORY_CUT_SECONDS = 1.5        # then a Memory call still under way is cut (before that report is given up on)

CHILDREN = [NotifierActor, RippleActor, LifecycleActor, ChainActor, SleeperActor, SchedulerActor,
            QualityActor, MemoryWatch, ModelWatch, WakeupWatch, QueueWatch, ReplayActor]      # started in this order


class Runtime:
    def __init__(self, cfg: Config, *, clock: Optional[Clock] = None, memory: Optional[MemoryClient] = None,
                 children: Optional[Sequence[type]] = None):
        """children: the actor classes the supervisor starts (a test hands it its own, e.g. one that crashes)."""
        self.cfg, self.children = cfg, list(children or CHILDREN)
        clock = clock or Clock()
        state_path = cfg.sleep.resolved_state_path()
        private.prepare(state_path.parent)      # 0700, and our files in it 0600
        self.folder = private.hold(state_path.parent)     # one service per state folder (FolderHeld)
        state = State(state_path)
        events = EventLog(state_path.with_name(EVENTS_FILE), clock, keep=cfg.events.keep)
        memory = memory or MemoryClient(cfg.memory.url, cfg.memory.resolve_bearer(), cfg.memory.timeout_seconds)
        model = ModelClient(cfg.model) if cfg.model.configured else None
        voice = VoiceCard(state_path.with_name("voice.json"), cfg.voice.max_chars, clock) if cfg.voice.enabled else None
        self.ctx = Context(cfg=cfg, memory=memory, state=state, events=events, clock=clock, model=model, voice=voice)
        self.board = Board()
        self.ctx.wire(self.board.put)   # the plain objects publish what /status shows
        self.looks = Looks()            # a viewer or /status client looking: the watches read on every beat
        self.registry = Registry()
        self.tick_flags: dict = {}      # name -> threading.Event: a beat is queued (the ticker coalesces)
        self.supervisor: Optional[pykka.ActorRef] = None
        child = lambda actor, kind=Child: kind(self.registry, self.board, actor)      # noqa: E731
        self.notifier: Child[NotifierProxy] = child(NotifierActor)
        self.ripple: RippleChild[RippleProxy] = child(RippleActor, RippleChild)
        self.ctx.gate = self.lifecycle = Gate(self.registry, self.board, LifecycleActor,
                                              cfg.model.lifecycle.ready_timeout_seconds, self.ctx.stopping)
        self.chain: Child[ChainProxy] = child(ChainActor)
        self.sleeper: Child[SleeperProxy] = child(SleeperActor)
        self.scheduler: SchedulerChild[SchedulerProxy] = child(SchedulerActor, SchedulerChild)
        self.memory_health: Child[WatchProxy] = child(MemoryWatch)
        self.wakeup: Child[WatchProxy] = child(WakeupWatch)
        self.queue: Child[WatchProxy] = child(QueueWatch)
        self.replay: Child[ReplayProxy] = child(ReplayActor)
        events.subscribe(self._deliver)

    @property
    def events(self) -> EventLog:
        return self.ctx.events

    def start(self) -> "Runtime":
        self.supervisor = Supervisor.start(self, self.children)
        # an ask is answered only after the supervisor's on_start, so the registry is full when the routes open
        self.supervisor.proxy().ping().get(timeout=60)
        with contextlib.suppress(pykka.ActorDeadError, pykka.Timeout):     # so /health's first answer knows Memory
            self.memory_health().ping().get(timeout=FIRST_READ_SECONDS)
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
        webhook = self.registry.estate(NotifierActor.name).get("session")
        if webhook is not None:
            webhook.cancel()        # a webhook post in flight is cut: the stop never waits on a receiver
        wakeups = self.registry.estate(RippleActor.name).get("wakeups")
        if wakeups is not None:
            wakeups.abandon()       # nor on a ripple endpoint's
        log.info("stopping: no new sleep or tend starts%s", "; the model call in flight was abandoned "
                 "(the step waiting on it is recorded as interrupted)" if cut else "")
        cutting = threading.Timer(MEMORY_CUT_SECONDS, self._cut_memory)
        cutting.daemon = True
        cutting.start()

    def _cut_memory(self) -> None:
        """MEMORY_CUT_SECONDS into the stop: a Memory call still under way (a Memory that hangs) is cut, and none
        starts after, so the step waiting on it ends within the stop's time, recorded as interrupted."""
        if self.ctx.memory.in_flight:
            log.warning("stopping: %d call(s) to SerenMemory still under way %g s into the stop are cut short (the "
                        "step waiting on one is recorded as interrupted; its brief is kept)", self.ctx.memory.in_flight,
                        MEMORY_CUT_SECONDS)
        self.ctx.memory.cut()

    def stop(self, timeout: float = 20.0) -> None:
        if self.supervisor is not None:
            with contextlib.suppress(pykka.ActorDeadError, pykka.Timeout):
                self.supervisor.stop(block=True, timeout=timeout)
            self.supervisor = None
        notifier.left_at_stop(self)         # what no notifier or ripple actor carried (it was down) says so
        ripple.left_at_stop(self)
        left = self.registry.estate(RippleActor.name).get("wakeups")
        if left is not None:
            left.shutdown()     # a ripple actor that was down (failed) never ran its on_stop
        model = self.registry.estate(LifecycleActor.name).get("server")
        if model is not None:
            model.shutdown()    # nor did a lifecycle actor that was down: the model it started stops here
        private.release(self.folder)

    def request(self, what: str, ask: Callable[..., pykka.Future], timeout: float) -> dict:
        """A tend, check or sleep by hand: take the cycle lock here (Busy at once if it is held) and hand it to the
        actor's method (`ask(token)`, on its proxy), waiting up to `timeout` for its report (once the stop has come,
        REPORT_AT_STOP_SECONDS more at most: the call the actor waits on may hang, a slow Memory)."""
        self.ctx.stopping.check(f"the {what} was not started")
        tok = self.ctx.cycle.enter(what)
        try:
            return answer(ask(tok), time.monotonic() + timeout, self.ctx.stopping, f"the {what} was still waiting "
                          "on a call that does not answer; it is left behind", REPORT_AT_STOP_SECONDS)
        except pykka.ActorDeadError:
            self.ctx.cycle.leave(tok)
            raise

    def restart(self, name: str, force: bool = False) -> str:
        """An operator's restart, asked of the supervisor (UnknownChild, ChildRunning, ChildDown); it answers at
        once with the child's state, and restarts in the background."""
        try:
            if self.supervisor is None:
                raise pykka.ActorDeadError("stopped")
            return self.supervisor.proxy().restart_child(name, force).get(timeout=RESTART_ANSWER_SECONDS)
        except (pykka.ActorDeadError, pykka.Timeout):
            raise ChildDown("the supervisor has stopped, so nothing was restarted; restart the service") from None

    def _deliver(self, event: dict) -> None:
        try:
            self.notifier().deliver.defer(event)
        except pykka.ActorDeadError:        # down: the next instance carries it (notifier.waiting)
            notifier.keep_waiting(self, event)

    def ripple_ended(self, event_type: str) -> None:
        """From the ripple's reaper thread: a wake-up's child ended (the ripple actor publishes its exit code)."""
        with DOWN_OK:
            self.ripple().ended.defer(event_type)

    def nudge(self) -> dict:
        woke = False
        with DOWN_OK:
            self.scheduler().wake.defer(time.monotonic())
            woke = True
        if not woke:        # the scheduler is down: its next instance finds the nudge pending (its estate)
            self.registry.estate(SchedulerActor.name)["nudge_pending"] = True
        self.ctx.events.bump("nudged", within=NUDGE_BURST_SECONDS, woke=woke)   # a burst is one event
        return {"ok": True, "woke": woke,
                "message": "carrying on now" if woke else "noted; the next tick carries on"}
