"""The chain actor: a tick's tend steps, and a tend by hand."""
from __future__ import annotations

from hippocampus.cycle import executor
from hippocampus.cycle.decide import Asked

from actors.base import Supervised


class ChainActor(Supervised):
    """The chain's part of a tick: tend and cull (redraft what was denied, close what landed)."""
    name = "chain"

    def on_Tend(self, msg) -> dict:
        with self.rt.holding(msg.token, "tend"):
            return executor.tend(self.rt.ctx, Asked(check=False, redraft=msg.redraft)).to_dict()

    def on_TendSteps(self, msg):
        return executor.tend(self.rt.ctx, given=(msg.snapshot, list(msg.steps)))

    def snapshot(self) -> dict:
        return {"busy": False}
