"""The scheduler: the tick clock, the tend cycle, and the nudge.

A tick holds the cycle lock from start to end: it reads one snapshot of Memory, decides its steps once
(hippocampus.tick.decide), hands the chain's steps to the chain actor and the sleeper's to the sleeper,
then tells the model lifecycle whether a chain is open. In `thread` mode a tick runs every heartbeat.
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

from hippocampus.cycle import briefs as gate
from hippocampus.cycle.lock import Busy
from hippocampus.memory import MemoryError_
from hippocampus.stopping import ServiceStopping
from hippocampus.cycle.decide import CHAIN_STEPS, CHECK_STEPS, Asked, decide
from hippocampus.cycle.snapshot import read_for

from actors.base import Supervised
from actors.messages import CheckSteps, ModelTick, RetrySkipped, TendSteps

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

    def on_Tick(self, msg) -> None:
        if self.rt.cfg.sleep.mode != "thread" or time.monotonic() < self.next_tick:
            return
        self.run_tick(nudged=False)

    def on_Wake(self, msg) -> None:
        if not self.rt.nudges.pending():
            return                       # collapsed into a tick that already ran
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
            self.rt.nudges.take()        # taken only once the tick holds the cycle, so never lost
        self.next_tick = time.monotonic() + self.heartbeat
        self.ticking = True
        self.publish()
        started = time.time()
        try:
            tend, check, chain_open = self._steps(nudged)
        finally:
            self.rt.ctx.cycle.leave(token)
        self.rt.tell("lifecycle", ModelTick(chain_open=chain_open))
        # skipped ripples go again after the steps, never before: a wake-up kept for a brief that has since
        # arrived is then seen answered (this check slept on it) instead of landing on top of that sleep
        self.rt.tell("ripple", RetrySkipped())
        self.ticking = False
        self.ticks += 1
        self.last_tick = {"started_at": started, "finished_at": time.time(), "nudged": nudged,
                          "tend": None if tend is None else "ran", "check": (check or {}).get("status")}
        return self.last_tick

    def _steps(self, nudged: bool) -> tuple:
        """(the tend's report, the check's report, is a chain open now). A step that did not run says
        nothing about the chain: never "no chain open" on its word, or a sleep loses its model mid-answer."""
        ctx = self.rt.ctx
        now = ctx.clock.now()
        gate.note_first_check(ctx, now)
        try:
            snap = read_for(ctx)
        except MemoryError_ as exc:
            report = {"at": now, "brief_id": None, "misses": ctx.state.get("brief_misses") or 0,
                      "purged": 0, "sleep": None}
            gate.record_failed_check(ctx, report, exc)
            return None, report, True
        steps = decide(snap, ctx.state, self.rt.cfg.sleep, now, Asked(redraft=self._redraft_due(nudged)))
        chain_steps = tuple(s for s in steps if s.kind in CHAIN_STEPS)
        tend = self._run("tend", "chain", TendSteps(snap, chain_steps)) if chain_steps else {}
        check = self._run("check", "sleeper", CheckSteps(snap, tuple(s for s in steps if s.kind in CHECK_STEPS)))
        if tend is None or check is None:
            return tend, check, True
        drafted = bool(tend.get("resubmitted")) or bool((check.get("sleep") or {}).get("draft_id"))
        return tend, check, snap.chain_open or drafted

    def _run(self, what: str, actor: str, message) -> Optional[dict]:
        try:
            return self.rt.ask(actor, message, timeout=None)
        except (pykka.ActorDeadError, ServiceStopping):
            return None
        except Exception as exc:  # noqa: BLE001 - a tick never dies of one step
            log.error("the %s failed in the tick: %s", what, exc)
            return None

    def snapshot(self) -> dict:
        thread_mode = self.rt.cfg.sleep.mode == "thread"
        wall_next = time.time() + max(0.0, self.next_tick - time.monotonic())
        return {"ticking": self.ticking, "ticks": self.ticks, "last_tick": self.last_tick,
                "next_tick_at": wall_next if thread_mode else None, "heartbeat": self.heartbeat}

