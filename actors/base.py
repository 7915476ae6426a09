"""The supervised child: a thin mailbox around plain objects, publishing a snapshot after every message to
the board, which the routes read instead of asking a busy actor.

A tell that raises kills the child; its on_failure tells the supervisor, which restarts it.
"""
from __future__ import annotations

import contextlib
import logging

import pykka

from actors import faults
from actors.messages import ChildFailed, Tick
from hippocampus.transport_words import in_words

log = logging.getLogger("hippocampus.actors")


class Supervised(pykka.ThreadingActor):
    name = "child"
    wants_beat = False      # wants the supervisor's fanned-out beat

    def __init__(self, supervisor: pykka.ActorRef, runtime) -> None:
        super().__init__()
        self.supervisor = supervisor
        self.rt = runtime

    def on_start(self) -> None:
        if self.rt.faults.pop(f"{self.name}:on_start", False) and faults.allowed():
            raise RuntimeError(f"injected on_start fault in {self.name}")
        self.publish()

    def on_failure(self, exc_type, exc, tb) -> None:
        with contextlib.suppress(pykka.ActorDeadError):
            self.supervisor.tell(ChildFailed(self.name, self.actor_urn, in_words(exc)))

    def on_receive(self, message):
        if isinstance(message, faults.Crash):
            if faults.allowed():
                raise RuntimeError(f"injected crash in {self.name} ({message.where})")
            log.warning("%s refused an injected crash (%s): the fault hooks are test-only and off",
                        self.name, message.where)
            return None
        handler = getattr(self, "on_" + type(message).__name__, None)
        if isinstance(message, Tick) and self.name in self.rt.tick_flags:
            self.rt.tick_flags[self.name].clear()      # the next beat may be queued again
        if handler is None:
            log.warning("%s got a message it does not know: %r", self.name, message)
            return None
        try:
            return handler(message)
        finally:
            self.publish()

    def snapshot(self) -> dict:
        return {}

    def publish(self) -> None:
        try:
            self.rt.board.put(self.name, self.snapshot())
        except Exception:  # noqa: BLE001 - a snapshot never fails a message
            log.exception("%s could not publish its snapshot", self.name)
