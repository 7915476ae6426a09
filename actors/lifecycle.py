"""The lifecycle actor, which owns the small model's server process, and the gate (ctx.gate) that reaches it.

On (re)start it adopts the process it started before (recorded in the state file), so a crash of this actor
never leaves an orphaned server. A start in progress sees the service's stop flag at its next poll and gives
up, so on_stop never waits out a model load.
"""
from __future__ import annotations

import time
from typing import Optional

import pykka

from hippocampus.model.client import ModelUnavailable
from hippocampus.model.lifecycle import ModelLifecycle

from actors.base import Supervised

POLL_SECONDS = 0.25          # how often a wait for the model looks for a stop
WAITING = "the wait for the model to start was given up and nothing was posted"


class LifecycleActor(Supervised):
    name = "lifecycle"

    def __init__(self, supervisor, runtime) -> None:
        super().__init__(supervisor, runtime)
        ctx = runtime.ctx
        self.lc = ModelLifecycle(runtime.cfg.model, state_dir=runtime.cfg.state_dir, clock=ctx.clock,
                                 emit=ctx.emit, persisted=ctx.state.get("lifecycle") or None,
                                 save=lambda d: ctx.state.set(lifecycle=d), stopping=ctx.stopping.is_set)

    def on_start(self) -> None:
        self.lc.adopt()
        super().on_start()

    def on_stop(self) -> None:
        self.lc.shutdown()

    def on_Ensure(self, msg) -> None:
        self.lc.ensure()

    def on_Release(self, msg) -> None:
        self.lc.release(msg.busy_seconds)

    def on_Handover(self, msg) -> bool:
        return self.lc.handover()

    def on_ModelTick(self, msg) -> None:
        if self.rt.ctx.cycle.holder() is None:      # else a sleep or tend may be mid-answer
            self.lc.tick(chain_open=msg.chain_open)

    def snapshot(self) -> dict:
        """With retry_at while a failed start holds the next one off."""
        snap = self.lc.snapshot()
        if self.lc.lc.managed and self.lc.last_failure is not None:
            snap["retry_at"] = self.lc.last_failure + self.lc.lc.retry_after_seconds
        return snap


class LifecycleGate:
    def __init__(self, runtime) -> None:
        self.rt = runtime

    def ensure(self) -> None:
        """Wait for the model to be up; a stop ends the wait at once (the lifecycle may still be starting it)."""
        timeout = self.rt.cfg.model.lifecycle.ready_timeout_seconds + 60
        deadline = time.monotonic() + timeout
        stopping = self.rt.ctx.stopping
        try:
            answer = self.rt.lifecycle.ensure()
            while True:
                stopping.check(WAITING)
                try:
                    answer.get(timeout=min(POLL_SECONDS, max(0.0, deadline - time.monotonic())))
                    return
                except pykka.Timeout:
                    if time.monotonic() >= deadline:
                        raise
        except pykka.ActorDeadError:
            stopping.check(WAITING)      # the stop took the lifecycle actor down: not "restarting"
            raise ModelUnavailable("the model lifecycle actor is restarting; the next check tries again") from None
        except pykka.Timeout:
            raise ModelUnavailable(f"the model did not come up within {timeout:g} s") from None

    def release(self, busy_seconds: float) -> None:
        self.rt.lifecycle.release(busy_seconds)

    def held_until(self, now: float) -> Optional[float]:
        """When a failed start of the model may be tried again, while that is still ahead (else None)."""
        at = (self.rt.board.get("lifecycle") or {}).get("retry_at")
        return at if at is not None and at > now else None

    def handover(self) -> bool:
        return self.rt.lifecycle.handover()
