"""The sleeper actor: a tick's check steps, and a check or a sleep by hand."""
from __future__ import annotations

from hippocampus.cycle import executor

from actors.base import Supervised


class SleeperActor(Supervised):
    """The rest of a tick (purge, the brief gate, the sleep), a check and a sleep by hand."""
    name = "sleeper"

    def on_Check(self, msg) -> dict:
        with self.rt.holding(msg.token, "check"):
            return executor.check(self.rt.ctx).to_dict()

    def on_CheckSteps(self, msg):
        return executor.check(self.rt.ctx, given=(msg.snapshot, list(msg.steps)))

    def on_Sleep(self, msg) -> dict:
        with self.rt.holding(msg.token, "sleep"):
            return executor.sleep_by_hand(self.rt.ctx, ask_for_brief=msg.ask_for_brief).to_dict()
