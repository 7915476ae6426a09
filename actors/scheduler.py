"""The scheduler actor: the tick clock, the tend cycle, the nudge.

A tick holds the cycle lock from start to end. A nudge runs a tick now, after the rippled session that sent
it has ended (bounded by nudge_wait_seconds); one that arrives while anything holds the cycle causes one
tick as soon as the holder lets go, and a burst of them causes one tick.
"""
from __future__ import annotations

import logging
import time

import pykka

from hippocampus.cycle import executor
from hippocampus.cycle.decide import Asked
from hippocampus.cycle.lock import Busy
from hippocampus.stopping import ServiceStopping

from actors.base import Supervised

log = logging.getLogger("hippocampus.scheduler")


class SchedulerActor(Supervised):
    name = "scheduler"
    wants_beat = True

    def __init__(self, supervisor, runtime) -> None:
        super().__init__(supervisor, runtime)
        self.heartbeat = runtime.cfg.sleep.heartbeat()
        self.next_tick = time.monotonic() + self.heartbeat
        self.next_redraft = 0.0
        self.ticking = False
        self.ticks = 0
        self.last_tick = None
        self.nudge_pending = False       # a nudge came that no tick has taken yet
        self.taken_at = 0.0              # when the last tick took the nudges (monotonic)

    def on_Tick(self, msg) -> None:
        if self.rt.cfg.sleep.mode == "thread" and time.monotonic() >= self.next_tick:
            self.run_tick(nudged=False)

    def on_Wake(self, msg) -> None:
        if msg.at < self.taken_at:
            return                       # taken by a tick that already ran
        self.nudge_pending = True
        self.on_Released(msg)

    def on_Released(self, msg) -> None:
        if not self.nudge_pending:
            return
        # first the rippled session that nudged ends (up to nudge_wait_seconds), but never past the start of a stop
        deadline = time.monotonic() + self.rt.cfg.sleep.nudge_wait_seconds
        while not self.rt.stopping:
            left = deadline - time.monotonic()
            if self.rt.ripple.settle(max(0.0, min(left, 0.25))) or left <= 0:
                break
        self.run_tick(nudged=True)

    def _redraft_due(self, nudged: bool):
        """True: redraft now. None: the tend decides by sleep time (tend_cycle off). False: not now."""
        now, cfg = time.monotonic(), self.rt.cfg.sleep
        if not nudged and not cfg.tend_cycle:
            return None
        if not nudged and now < self.next_redraft:
            return False
        self.next_redraft = now + cfg.tend_interval_seconds
        return True

    def run_tick(self, nudged: bool) -> None:
        if self.rt.stopping:
            return
        try:
            token = self.rt.ctx.cycle.enter("tick")
        except Busy:
            return                       # a nudge stays pending: the holder's release wakes us again
        if nudged:
            self.nudge_pending, self.taken_at = False, time.monotonic()
        self.next_tick = time.monotonic() + self.heartbeat
        self.ticking = True
        self.publish()
        started = time.time()
        try:
            tend, check, chain_open = executor.tick(
                self.rt.ctx, Asked(redraft=self._redraft_due(nudged)),
                lambda snap, steps: self._run("tend", lambda: self.rt.chain.steps(snap, steps)),
                lambda snap, steps: self._run("check", lambda: self.rt.sleeper.steps(snap, steps)))
        finally:
            self.rt.ctx.cycle.leave(token)
        self.rt.lifecycle.tick(chain_open)
        # skipped ripples go again only after the steps: one kept for a brief that arrived since is then seen answered
        self.rt.ripple.retry_skipped()
        self.ticking = False
        self.ticks += 1
        self.last_tick = {"started_at": started, "finished_at": time.time(), "nudged": nudged,
                          "tend": None if tend is None else "ran", "check": None if check is None else check.status}

    def _run(self, what: str, step):
        try:
            return step()
        except (pykka.ActorDeadError, ServiceStopping):
            return None
        except Exception as exc:  # noqa: BLE001 - a tick never dies of one step
            log.error("the %s failed in the tick: %s", what, exc)
            return None

    def snapshot(self) -> dict:
        wall_next = time.time() + max(0.0, self.next_tick - time.monotonic())
        return {"ticking": self.ticking, "nudge_pending": self.nudge_pending, "ticks": self.ticks,
                "last_tick": self.last_tick, "heartbeat": self.heartbeat,
                "next_tick_at": wall_next if self.rt.cfg.sleep.mode == "thread" else None}
