"""The lifecycle actor: owns the small model's server process.

On (re)start it adopts the process it started before (recorded in the state file), so a crash of this actor
never leaves an orphaned server. A start in progress sees the service's stop flag at its next poll and gives
up, so on_stop never waits out a model load.
"""
from __future__ import annotations

from hippocampus.model.lifecycle import ModelLifecycle

from actors.base import Supervised


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
