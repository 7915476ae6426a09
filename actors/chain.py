"""The chain actor: the chain's part of a tick (tend and cull: redraft what was denied, close what landed)."""
from __future__ import annotations

from hippocampus.cycle import executor
from hippocampus.cycle.decide import Asked

from actors.base import Supervised


class ChainActor(Supervised):
    name = "chain"

    def on_Tend(self, msg) -> dict:
        """POST /tend, tend_now: the caller took the cycle lock; the executor reads and decides the tend."""
        with self.rt.holding(msg.token, "tend"):
            return executor.tend(self.rt.ctx, Asked(check=False, redraft=msg.redraft)).to_dict()

    def on_TendSteps(self, msg):
        """The tick's chain steps, under the scheduler's own hold of the cycle: a TendReport."""
        return executor.tend(self.rt.ctx, given=(msg.snapshot, list(msg.steps)))

    def snapshot(self) -> dict:
        return {"busy": False}
