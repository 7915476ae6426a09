"""The lifecycle actor: owns the small model's server process.

At the service's start it adopts the process a previous run started (recorded in the state file). The
ModelLifecycle outlives a crash or an operator's restart of this actor (left to the next instance in the
registry's estate): the server it started, or is starting, stays up and stays ours; only the service's stop
stops it. A start in progress sees the service's stop flag at its next poll and gives up, so on_stop never
waits out a model load.
"""
from __future__ import annotations

import pykka
from pykka.typing import ActorMemberMixin, proxy_method

from hippocampus.model.lifecycle import ModelLifecycle

from actors.base import Supervised, kept_for, take_all


class LifecycleActor(Supervised):
    name = "lifecycle"
    wants_beat = True       # the keep-warm is looked at on every beat: external mode runs no tick on a timer

    def __init__(self, supervisor, runtime) -> None:
        super().__init__(supervisor, runtime)
        ctx = runtime.ctx
        self.server = self.inherit("server", lambda: ModelLifecycle(
            runtime.cfg.model, state_dir=runtime.cfg.state_dir, clock=ctx.clock, emit=ctx.emit,
            persisted=ctx.state.get("lifecycle") or None, save=lambda d: ctx.state.set(lifecycle=d),
            stopping=ctx.stopping.is_set))
        self.server.changed = self.publish      # /status says "starting" while a start loads the model

    def on_start(self) -> None:
        self.server.adopt()         # once: a later instance finds nothing left to adopt
        for chain_open in take_all(missed_ticks(self.rt.registry)):
            self.tick(chain_open)   # a tick's end told while no instance was up (or left unread by the last)
        super().on_start()

    def dropped(self, method: str, *args) -> None:
        if method == "tick":
            missed_ticks(self.rt.registry).append(args[0])

    def on_stop(self) -> None:
        if self.rt.stopping:        # the service stops; an actor's restart leaves the model to the next instance
            self.server.shutdown()

    def ensure(self) -> None:
        self.server.ensure()

    def release(self, busy_seconds: float) -> None:
        self.server.release(busy_seconds)

    def handover(self) -> bool:
        return self.server.handover()

    def tick(self, chain_open: bool) -> None:
        """After each tick: the keep-warm (and the handover's time) decides whether the model stays up."""
        if self.rt.ctx.cycle.holder() is None and not self.rt.lifecycle.in_use():   # else a call may be mid-answer
            self.server.tick(chain_open=chain_open)

    def on_beat(self, at: float) -> None:
        """keep_warm_seconds after its last use the model stops, whether a tick comes or not (the cycle-over stop
        is the tick's: only a tick's read knows no chain is open)."""
        self.tick(chain_open=True)

    def snapshot(self) -> dict:
        """With retry_at while a failed start holds the next one off."""
        snap, cfg = self.server.snapshot(), self.rt.cfg.model.lifecycle
        if cfg.managed and self.server.last_failure is not None:
            snap["retry_at"] = self.server.last_failure + cfg.retry_after_seconds
        return snap


def missed_ticks(registry):
    """The end of a tick no lifecycle actor read (chain_open): the next one does the keep-warm and the cycle-over
    stop of it first; only the newest counts."""
    return kept_for(registry, LifecycleActor.name, 1)


class LifecycleProxy(ActorMemberMixin, pykka.ActorProxy[LifecycleActor]):
    ensure = proxy_method(LifecycleActor.ensure)
    release = proxy_method(LifecycleActor.release)
    handover = proxy_method(LifecycleActor.handover)
    tick = proxy_method(LifecycleActor.tick)
