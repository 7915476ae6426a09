"""The scheduler: the tick clock, the tend cycle, and the nudge.

In `thread` mode it runs a tick every heartbeat (tend, then check, then the
model's stop check). A nudge runs a tick now, after the rippled session that
sent it has ended (bounded by nudge_wait_seconds, never killed). Nudges that
arrive while a tick waits collapse into it; one that arrives while a tick runs
causes one more tick right after.
"""
from __future__ import annotations

import logging
import time
from typing import Optional

from .base import Supervised
from .messages import Check, ModelTick, RetrySkipped, Tend

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
        self.rt.nudges.take()
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
        self.next_tick = time.monotonic() + self.heartbeat
        self.ticking = True
        self.publish()
        started = time.time()
        tend = self.rt.run_locked("tend", "chain", lambda tok: Tend(self._redraft_due(nudged), tok))
        check = self.rt.run_locked("check", "sleeper", lambda tok: Check(tok))
        # a step that did not run (the cycle was busy, or its actor is down) says nothing about the chain:
        # never "no chain open" on its word, or a sleep by hand loses its model mid-answer
        chain_open = True if tend is None or check is None else _chain_open(tend, check)
        self.rt.tell("lifecycle", ModelTick(chain_open=chain_open))
        # skipped ripples go again after the steps, never before: a wake-up kept for a brief that has since
        # arrived is then seen answered (this check slept on it) instead of landing on top of that sleep
        self.rt.tell("ripple", RetrySkipped())
        self.ticking = False
        self.ticks += 1
        self.last_tick = {"started_at": started, "finished_at": time.time(), "nudged": nudged,
                          "tend": None if tend is None else "ran", "check": (check or {}).get("status")}
        return self.last_tick

    def snapshot(self) -> dict:
        thread_mode = self.rt.cfg.sleep.mode == "thread"
        wall_next = time.time() + max(0.0, self.next_tick - time.monotonic())
        return {"ticking": self.ticking, "ticks": self.ticks, "last_tick": self.last_tick,
                "next_tick_at": wall_next if thread_mode else None, "heartbeat": self.heartbeat}


def _chain_open(tend, check) -> bool:
    if isinstance(check, dict):
        if check.get("status") == "chain_open" or (check.get("sleep") or {}).get("draft_id"):
            return True
    if isinstance(tend, dict):
        return bool(tend.get("under_review") or tend.get("deferred") or tend.get("resubmitted")
                    or tend.get("model_failures"))
    return False
