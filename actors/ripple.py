"""The ripple actor: owns the Ripple, which wakes the main model, one run at a time per event.

A ripple skipped because the last one for its event still runs is kept and fired again on the next tick.
The Ripple outlives a crash of this actor (left to the next instance in the registry's estate), so a
wake-up still running is never started twice.
"""
from __future__ import annotations

from hippocampus.cycle import briefs
from hippocampus.ripple.fire import Ripple

from actors.base import Supervised


class RippleActor(Supervised):
    name = "ripple"

    def __init__(self, supervisor, runtime) -> None:
        super().__init__(supervisor, runtime)
        self.kept: dict = {}        # event type -> the newest event whose ripple was skipped
        estate = runtime.registry.estate(self.name)
        if "ripple" not in estate:
            estate["ripple"] = Ripple(runtime.cfg.ripple, log_dir=runtime.cfg.state_dir)
        self.ripple = estate["ripple"]
        self.ripple.on_exit = runtime.ripple.ended       # the reaper's thread tells; this mailbox publishes

    def on_stop(self) -> None:
        self.ripple.shutdown()

    def on_Ended(self, msg) -> None:
        pass                    # the snapshot published after every message carries the exit code

    def on_Fire(self, msg):
        return self._fire(msg.event) if self.ripple.wants(msg.event["type"]) else None

    def on_RetrySkipped(self, msg) -> None:
        for type_, event in list(self.kept.items()):
            if not self.ripple.busy(type_):
                del self.kept[type_]
                if type_ == "brief_requested" and briefs.brief_wanted(self.rt.ctx) is None:
                    # answered while it waited: firing it now wakes the main model for nothing
                    self.rt.ctx.events.annotate(event["seq"], ripple={**(event.get("ripple") or {}),
                                                                      "dropped": "the brief arrived"})
                    continue
                self._fire(event, retry=True)

    def _fire(self, event: dict, retry: bool = False) -> dict:
        outcome = self.ripple.fire(event)
        if retry:
            outcome = {**outcome, "retried": True}
        if outcome.get("skipped"):
            self.kept[event["type"]] = event
        self.rt.ctx.events.annotate(event["seq"], ripple=outcome)
        self.rt.wakeup.recheck()
        return outcome

    def snapshot(self) -> dict:
        return {"type": self.rt.cfg.ripple.type or "off", "running": self.ripple.running_count(),
                "waiting_to_retry": sorted(self.kept), "last": self.ripple.last_results()}
