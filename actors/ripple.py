"""The ripple actor: wakes the main model, one run at a time per event.

A ripple that could not start because the last one for that event is still
running is kept and fired again on the next tick.
"""
from __future__ import annotations

from hippocampus import gate

from .base import Supervised


class RippleActor(Supervised):
    name = "ripple"

    def __init__(self, supervisor, runtime) -> None:
        super().__init__(supervisor, runtime)
        self.kept: dict = {}        # event type -> the newest event whose ripple was skipped

    def on_Fire(self, msg) -> dict:
        return self._fire(msg.event)

    def on_RetrySkipped(self, msg) -> None:
        for type_, event in list(self.kept.items()):
            if not self.rt.ripple.busy(type_):
                del self.kept[type_]
                if type_ == "brief_requested" and gate.brief_wanted(self.rt.ctx) is None:
                    # answered while it waited: firing it now wakes the main model for nothing, on top of
                    # the sleep that brief started (and, with handover, of the small model drafting)
                    self.rt.ctx.events.annotate(event["seq"], ripple={**(event.get("ripple") or {}),
                                                                      "dropped": "the brief arrived"})
                    continue
                self._fire(event, retry=True)

    def _fire(self, event: dict, retry: bool = False) -> dict:
        outcome = self.rt.ripple.fire(event)
        if retry:
            outcome = {**outcome, "retried": True}
        if outcome.get("skipped"):
            self.kept[event["type"]] = event
        self.rt.ctx.events.annotate(event["seq"], ripple=outcome)
        return outcome

    def snapshot(self) -> dict:
        return {"type": self.rt.cfg.ripple.type or "off", "running": self.rt.ripple.running_count(),
                "waiting_to_retry": sorted(self.kept)}
