"""The model gate the domain sees (ctx.gate), carried to the lifecycle actor through its proxy."""
from __future__ import annotations

import time
from typing import Optional

import pykka

from hippocampus.model.client import ModelUnavailable

POLL_SECONDS = 0.25          # how often a wait for the model looks for a stop
WAITING = "the wait for the model to start was given up and nothing was posted"


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
