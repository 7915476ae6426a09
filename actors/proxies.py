"""How anything outside an actor reaches it: a Child is found again after each restart and gives its typed
proxy (pykka's: a method called is an ask, `.defer()` a tell); the board holds what it last published.

Every ask has a deadline; the tick is told, never asked.
"""
from __future__ import annotations

import threading
import time
from typing import Generic, Optional, TypeVar, cast

import pykka

from hippocampus.model.client import ModelUnavailable

from actors.base import DOWN_OK, answer
from actors.lifecycle import LifecycleProxy

P = TypeVar("P")
WAITING = "the wait for the model to start was given up and nothing was posted"


class Child(Generic[P]):
    """One of the supervisor's children, by its class (never by a name written out)."""

    def __init__(self, registry, board, actor: type) -> None:
        self.registry, self.board, self.name = registry, board, actor.name

    def __call__(self) -> P:
        """Its proxy; pykka.ActorDeadError while it is down."""
        proxy = self.registry.proxy(self.name)
        if proxy is None:
            raise pykka.ActorDeadError(f"the {self.name} actor is down (restarting or failed): see /actors")
        return cast(P, proxy)

    def up(self) -> bool:
        ref = self.registry.get(self.name)
        return ref is not None and ref.is_alive()

    def published(self) -> dict:
        return self.board.get(self.name) or {}


class RippleChild(Child):
    def running_count(self) -> int:
        return int(self.published().get("running") or 0)


class SchedulerChild(Child):
    def nudge_pending(self) -> bool:
        return bool(self.published().get("nudge_pending"))


class Gate(Child[LifecycleProxy]):
    """The lifecycle actor as the domain sees it (ctx.gate): the model, up when asked."""

    def __init__(self, registry, board, actor: type, ready_timeout: float, stopping) -> None:
        super().__init__(registry, board, actor)
        self.timeout, self.stopping = ready_timeout + 60, stopping
        self._in_use, self._lock = 0, threading.Lock()

    def in_use(self) -> bool:
        """A call is on the model (from its ensure to its release): no tick stops the model meanwhile."""
        return self._in_use > 0

    def ensure(self) -> None:
        """Wait for the model to be up; a stop ends the wait at once (the lifecycle may still be starting it).
        In use from here (a tick told while the model starts runs after the start) until release()."""
        with self._lock:
            self._in_use += 1
        try:
            self._ensure()
        except BaseException:
            with self._lock:
                self._in_use -= 1
            raise

    def _ensure(self) -> None:
        try:
            answer(self().ensure(), time.monotonic() + self.timeout, self.stopping, WAITING)
        except pykka.ActorDeadError:
            self.stopping.check(WAITING)      # the stop took the lifecycle actor down: not "restarting"
            if ((self.board.get("actors") or {}).get(self.name) or {}).get("state") == "failed":   # left down
                raise ModelUnavailable(f"the model {self.name} actor is down (it crashed too often); "
                                       f"POST /actors/{self.name}/restart brings it back") from None
            raise ModelUnavailable("the model lifecycle actor is restarting; the next check tries again") from None
        except pykka.Timeout:
            raise ModelUnavailable(f"the model did not come up within {self.timeout:g} s") from None

    def release(self, busy_seconds: float) -> None:
        with self._lock:
            self._in_use = max(0, self._in_use - 1)
        with DOWN_OK:
            self().release.defer(busy_seconds)

    def handover(self, timeout: float = 120) -> bool:
        """False when the lifecycle is down or does not answer within `timeout`."""
        try:
            return bool(self().handover().get(timeout=timeout))
        except (pykka.ActorDeadError, pykka.Timeout):
            return False

    def held_until(self, now: float) -> Optional[float]:
        """When a failed start of the model may be tried again, while that is still ahead (else None)."""
        at = self.published().get("retry_at")
        return at if at is not None and at > now else None
