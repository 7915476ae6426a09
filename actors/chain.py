"""The chain actor: tend and cull (redraft what was denied, close what landed)."""
from __future__ import annotations

from hippocampus.cycle.tend import tend
from hippocampus.cycle.snapshot import refresh_after

from actors.base import Supervised


class ChainActor(Supervised):
    name = "chain"

    def on_Tend(self, msg) -> dict:
        """POST /tend, tend_now: the caller took the cycle lock; this reads and decides its own steps."""
        with self.rt.holding(msg.token, "tend"):
            return refresh_after(self.rt.ctx, tend(self.rt.ctx, msg.redraft))

    def on_TendSteps(self, msg) -> dict:
        """The tick's chain steps, under the scheduler's own hold of the cycle."""
        return refresh_after(self.rt.ctx, tend(self.rt.ctx, snap=msg.snapshot, steps=list(msg.steps)))

    def snapshot(self) -> dict:
        return {"busy": False}

