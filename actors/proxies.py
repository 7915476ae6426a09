"""Typed proxies: how anything outside an actor tells or asks it, without its name or its message classes.

Each call looks the child up in the registry, so a restarted child is found again. A tell to a child that
is down returns False; an ask raises pykka.ActorDeadError, and has a timeout except the tick's steps (the
tick holds the cycle lock across them: giving up on a running step would let another start on top of it).
"""
from __future__ import annotations

import contextlib
import time
from typing import Any, Optional

import pykka

from hippocampus.model.client import ModelUnavailable

from actors import messages as m

POLL_SECONDS = 0.25          # how often a wait for the model looks for a stop
WAITING = "the wait for the model to start was given up and nothing was posted"


class Proxy:
    name = ""

    def __init__(self, registry, board, name: str = "") -> None:
        self.registry, self.board, self.name = registry, board, name or self.name

    def ref(self) -> pykka.ActorRef:
        ref = self.registry.get(self.name)
        if ref is None:
            raise pykka.ActorDeadError(f"the {self.name} actor is down (restarting or failed): see /actors")
        return ref

    def tell(self, message: Any) -> bool:
        with contextlib.suppress(pykka.ActorDeadError):
            self.ref().tell(message)
            return True
        return False

    def ask(self, message: Any, timeout: Optional[float]) -> Any:
        return self.ref().ask(message, timeout=timeout)

    def answered(self, message: Any, timeout: float) -> bool:
        """The answer as a bool; False when the child is down or does not answer within `timeout`."""
        with contextlib.suppress(pykka.ActorDeadError, pykka.Timeout):
            return bool(self.ask(message, timeout=timeout))
        return False

    def published(self) -> dict:
        return self.board.get(self.name) or {}


class Notifier(Proxy):
    name = "notifier"

    def publish(self, event: dict) -> bool:
        return self.tell(m.Publish(event))


class RippleProxy(Proxy):
    name = "ripple"

    def fire(self, event: dict) -> bool:
        return self.tell(m.Fire(event))

    def retry_skipped(self) -> bool:
        return self.tell(m.RetrySkipped())

    def ended(self, event_type: str) -> bool:
        return self.tell(m.Ended(event_type))

    def running_count(self) -> int:
        return int(self.published().get("running") or 0)

    def settle(self, timeout: float, poll: float = 0.05) -> bool:
        """Wait (up to timeout) until no wake-up started here is still running."""
        deadline = time.monotonic() + max(0.0, timeout)
        while self.running_count() and time.monotonic() < deadline:
            time.sleep(min(poll, max(0.0, deadline - time.monotonic())))
        return not self.running_count()


class Lifecycle(Proxy):
    """The lifecycle actor, and the model gate the domain sees (ctx.gate)."""
    name = "lifecycle"

    def __init__(self, registry, board, ready_timeout: float, stopping) -> None:
        super().__init__(registry, board)
        self.timeout, self.stopping = ready_timeout + 60, stopping

    def ensure(self) -> None:
        """Wait for the model to be up; a stop ends the wait at once (the lifecycle may still be starting it)."""
        deadline = time.monotonic() + self.timeout
        try:
            answer = self.ref().ask(m.Ensure(), block=False)
            while True:
                self.stopping.check(WAITING)
                try:
                    answer.get(timeout=min(POLL_SECONDS, max(0.0, deadline - time.monotonic())))
                    return
                except pykka.Timeout:
                    if time.monotonic() >= deadline:
                        raise
        except pykka.ActorDeadError:
            self.stopping.check(WAITING)      # the stop took the lifecycle actor down: not "restarting"
            raise ModelUnavailable("the model lifecycle actor is restarting; the next check tries again") from None
        except pykka.Timeout:
            raise ModelUnavailable(f"the model did not come up within {self.timeout:g} s") from None

    def release(self, busy_seconds: float) -> bool:
        return self.tell(m.Release(busy_seconds))

    def handover(self, timeout: float = 120) -> bool:
        return self.answered(m.Handover(), timeout)

    def tick(self, chain_open: bool) -> bool:
        return self.tell(m.ModelTick(chain_open=chain_open))

    def held_until(self, now: float) -> Optional[float]:
        """When a failed start of the model may be tried again, while that is still ahead (else None)."""
        at = self.published().get("retry_at")
        return at if at is not None and at > now else None


class Scheduler(Proxy):
    name = "scheduler"

    def wake(self) -> bool:
        """A nudge: the scheduler keeps it pending until a tick that holds the cycle takes it."""
        return self.tell(m.Wake(time.monotonic()))

    def released(self) -> bool:
        return self.tell(m.Released())

    def nudge_pending(self) -> bool:
        return bool(self.published().get("nudge_pending"))


class Chain(Proxy):
    name = "chain"

    def steps(self, snapshot: Any, steps: tuple) -> dict:
        return self.ask(m.TendSteps(snapshot, steps), timeout=None)


class Sleeper(Proxy):
    name = "sleeper"

    def steps(self, snapshot: Any, steps: tuple) -> dict:
        return self.ask(m.CheckSteps(snapshot, steps), timeout=None)


class Watch(Proxy):
    """A watch actor (actors/watch.py), by name."""

    def recheck(self) -> bool:
        """Read again on the next beat."""
        return self.tell(m.Recheck())

    def ping(self, timeout: float) -> bool:
        """Answered once its on_start (and a first read there) is done."""
        return self.answered(m.Ping(), timeout)
