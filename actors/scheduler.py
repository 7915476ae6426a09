"""The scheduler actor: the clock. It only tells: a tick is told to the chain, which runs it with the sleeper;
the scheduler never runs a tick's work nor waits on one.

A tick holds the cycle lock from start to end. A nudge runs a tick now, after the rippled session that sent
it has ended (bounded by nudge_wait_seconds); one that arrives while anything holds the cycle causes one
tick at the first beat that finds the cycle free (supervisor.check_seconds), and a burst of them causes one
tick. Nothing tells the scheduler a tick ended: the tick's record is the board's (ctx.ticks).
"""
from __future__ import annotations

import logging
import time
from typing import Optional

import pykka
from pykka.typing import ActorMemberMixin, proxy_method

from hippocampus.cycle.lock import Busy

from actors.base import Supervised

log = logging.getLogger(__name__)
SETTLE_POLL_SECONDS = 0.05     # how often a nudge looks whether the wake-up that sent it has ended


class SchedulerActor(Supervised):
    name = "scheduler"
    wants_beat = True

    def __init__(self, supervisor, runtime) -> None:
        super().__init__(supervisor, runtime)
        self.heartbeat = runtime.cfg.sleep.heartbeat()
        self.next_tick = time.monotonic() + self.heartbeat
        self.next_redraft = 0.0
        self._estate = runtime.registry.estate(self.name)      # what the next instance is left
        self.taken_at = 0.0              # when the last tick took the nudges (monotonic)

    @property
    def nudge_pending(self) -> bool:
        """A nudge came that no tick has taken yet (kept in the estate: a restart of this actor keeps it)."""
        return bool(self._estate.get("nudge_pending"))

    @nudge_pending.setter
    def nudge_pending(self, pending: bool) -> None:
        self._estate["nudge_pending"] = pending

    def on_beat(self, at: float) -> None:
        if self.nudge_pending and self.rt.ctx.cycle.holder() is None:
            self._nudged()               # a nudge that found the cycle held, or the chain down, runs now
        elif self.rt.cfg.sleep.mode == "thread" and time.monotonic() >= self.next_tick:
            self._tick(nudged=False)

    def wake(self, at: float) -> None:
        """A nudge (sent at `at`, monotonic): pending until a tick that holds the cycle takes it."""
        if at < self.taken_at:
            return                       # taken by a tick that already ran
        self.nudge_pending = True
        self._nudged()

    def _nudged(self) -> None:
        """A pending nudge runs its tick now."""
        # first the rippled session that nudged ends (up to nudge_wait_seconds), but never past the start of a stop
        deadline = time.monotonic() + self.rt.cfg.sleep.nudge_wait_seconds
        while self.rt.ripple.running_count() and not self.rt.stopping and time.monotonic() < deadline:
            self.rt.ctx.stopping.wait(min(SETTLE_POLL_SECONDS, deadline - time.monotonic()))
        self._tick(nudged=True)

    def _redraft_due(self, nudged: bool) -> Optional[bool]:
        """True: redraft now. None: the tend decides by sleep time (tend_cycle off). False: not now."""
        now, cfg = time.monotonic(), self.rt.cfg.sleep
        if not nudged and not cfg.tend_cycle:
            return None
        if not nudged and now < self.next_redraft:
            return False
        self.next_redraft = now + cfg.tend_interval_seconds
        return True

    def _tick(self, nudged: bool) -> None:
        """Take the cycle and tell the chain to tick; the chain and then the sleeper hold it till the tick ends."""
        if self.rt.stopping or not self.rt.chain.up():
            return                       # a nudge stays pending: the next beat tries again
        try:
            token = self.rt.ctx.cycle.enter("tick")
        except Busy:
            return                       # a nudge stays pending: a beat that finds the cycle free runs it
        if nudged:
            self.nudge_pending, self.taken_at = False, time.monotonic()
        self.next_tick = time.monotonic() + self.heartbeat
        try:
            self.rt.ctx.ticks.started()
            self.rt.chain().tick.defer(token, nudged, self._redraft_due(nudged))
        except pykka.ActorDeadError:
            log.warning("no tick: the chain actor is down (restarting or failed)")
            self.rt.ctx.ticks.ended()
            self.rt.ctx.cycle.leave(token)

    def snapshot(self) -> dict:
        wall_next = time.time() + max(0.0, self.next_tick - time.monotonic())
        return {"nudge_pending": self.nudge_pending, "heartbeat": self.heartbeat,
                "next_tick_at": wall_next if self.rt.cfg.sleep.mode == "thread" else None}


class SchedulerProxy(ActorMemberMixin, pykka.ActorProxy[SchedulerActor]):
    wake = proxy_method(SchedulerActor.wake)
