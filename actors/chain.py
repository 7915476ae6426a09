"""The chain actor: tend and cull (redraft what was denied, close what landed)."""
from __future__ import annotations

from hippocampus.tend import tend

from .base import Supervised


class ChainActor(Supervised):
    name = "chain"

    def __init__(self, supervisor, runtime) -> None:
        super().__init__(supervisor, runtime)
        self.last = None

    def on_Tend(self, msg) -> dict:
        with self.rt.holding(msg.token, "tend"):
            self.last = tend(self.rt.ctx, msg.redraft)
        return self.last

    def snapshot(self) -> dict:
        return {"busy": False}
