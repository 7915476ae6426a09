"""The sleeper actor: the check (purge, the brief gate) and the sleep itself."""
from __future__ import annotations

from hippocampus.cycle import briefs as gate
from hippocampus.cycle.snapshot import refresh_after

from actors.base import Supervised


class SleeperActor(Supervised):
    name = "sleeper"

    def on_Check(self, msg) -> dict:
        """POST /check, check_now: the caller took the cycle lock; this reads and decides its own steps."""
        with self.rt.holding(msg.token, "check"):
            return refresh_after(self.rt.ctx, gate.check(self.rt.ctx))

    def on_CheckSteps(self, msg) -> dict:
        """The tick's sleeper steps, under the scheduler's own hold of the cycle."""
        return refresh_after(self.rt.ctx, gate.check(self.rt.ctx, snap=msg.snapshot, steps=list(msg.steps)))

    def on_Sleep(self, msg) -> dict:
        with self.rt.holding(msg.token, "sleep"):
            return refresh_after(self.rt.ctx, gate.sleep_by_hand(self.rt.ctx, ask_for_brief=msg.ask_for_brief))

