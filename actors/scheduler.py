"""The scheduler: the tick clock, the tend cycle, and the nudge.

A tick holds the cycle lock from start to end: the executor (hippocampus.cycle.executor) reads one
snapshot of Memory and decides once; the chain's steps go to the chain actor and the rest to the sleeper,
then the model lifecycle is told whether a chain is open. In `thread` mode a tick runs every heartbeat.
A nudge runs a tick now, after the rippled session that sent it has ended (bounded by
nudge_wait_seconds, never killed). Nudges are never lost: one that arrives while anything holds the
cycle (a tick, or a sleep, tend or check started over HTTP or MCP) causes one tick as soon as the holder
lets go, and a burst of them causes one tick.
"""
from __future__ import annotations

import logging
import time
from typing import Optional

import pykka

from hippocampus.cycle import executor
from hippocampus.cycle.decide import Asked
from hippocampus.cycle.lock import Busy
from hippocampus.stopping import ServiceStopping

from actors.base import Supervised

log = logging.getLogger("hippocampus.scheduler")


class SchedulerActor(Supervised):
    name = "scheduler"

    def __init__(self, supervisor, runtime) -> None:
        super().__init__(supervisor, runtime)
        cfg = runtime.cfg.sleep
        self.heartbeat = cfg.heartbeat()
        self.next_tick = time.monotonic() + self.heartbeat
        self.next_redraft = 0.0
        self.ticking = False
        self.ticks = 0
        self.last_tick = None
        self.nudge_pending = False       # a nudge came that no tick has taken yet
        self.taken_at = 0.0              # when the last tick took the nudges (monotonic)

    def on_Tick(self, msg) -> None:
        if self.rt.cfg.sleep.mode != "thread" or time.monotonic() < self.next_tick:
            return
        self.run_tick(nudged=False)

    def on_Wake(self, msg) -> None:
        if msg.at < self.taken_at:
            return                       # collapsed into a tick that already ran
        self.nudge_pending = True
        self.on_Released(msg)

    def on_Released(self, msg) -> None:
        if not self.nudge_pending:
            return
        self._settle(self.rt.cfg.sleep.nudge_wait_seconds)
        self.run_tick(nudged=True)

    def _settle(self, seconds: float) -> None:
        """Wait (up to seconds) for the rippled session to end, but never past the start of a stop."""
        deadline = time.monotonic() + seconds
        while not self.rt.stopping:
            left = deadline - time.monotonic()
            if self.rt.ripple.settle(max(0.0, min(left, 0.25))) or left <= 0:
                return

    def _redraft_due(self, nudged: bool):
        """True: redraft now. None: the tend decides by sleep time (tend_cycle off). False: not now."""
        now = time.monotonic()
        cfg = self.rt.cfg.sleep
        if nudged:
            self.next_redraft = now + cfg.tend_interval_seconds
            return True
        if not cfg.tend_cycle:
            return None
        if now >= self.next_redraft:
            self.next_redraft = now + cfg.tend_interval_seconds
            return True
        return False

    def run_tick(self, nudged: bool) -> Optional[dict]:
        if self.rt.stopping:
            return None                  # the service is stopping: no new step starts
        try:
            token = self.rt.ctx.cycle.enter("tick")
        except Busy:
            return None                  # a nudge stays pending: the holder's release wakes us again
        if nudged:
            self.nudge_pending, self.taken_at = False, time.monotonic()   # taken once the tick holds the cycle
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
        # skipped ripples go again after the steps, never before: a wake-up kept for a brief that has since
        # arrived is then seen answered (this check slept on it) instead of landing on top of that sleep
        self.rt.ripple.retry_skipped()
        self.ticking = False
        self.ticks += 1
        self.last_tick = {"started_at": started, "finished_at": time.time(), "nudged": nudged,
                          "tend": None if tend is None else "ran", "check": None if check is None else check.status}
        return self.last_tick

    def _run(self, what: str, step):
        try:
            return step()
        except (pykka.ActorDeadError, ServiceStopping):
            return None
        except Exception as exc:  # noqa: BLE001 - a tick never dies of one step
            log.error("the %s failed in the tick: %s", what, exc)
            return None

    def snapshot(self) -> dict:
        thread_mode = self.rt.cfg.sleep.mode == "thread"
        wall_next = time.time() + max(0.0, self.next_tick - time.monotonic())
        return {"ticking": self.ticking, "nudge_pending": self.nudge_pending, "ticks": self.ticks,
                "last_tick": self.last_tick,
                "next_tick_at": wall_next if thread_mode else None, "heartbeat": self.heartbeat}

