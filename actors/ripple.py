"""The ripple actor: wakes the main model, one run at a time per event.

A ripple that could not start because the last one for that event is still
running is kept and fired again on the next tick.

The wake-up check (hippocampus.ripple_check) runs in the background at start
and after each ripple, and is published on the board as "wakeup"; the last
ripple per event, with its exit code once the child ends, is in the snapshot.
"""
from __future__ import annotations

from dataclasses import dataclass

from hippocampus.cycle import briefs as gate
from hippocampus.ripple import check as ripple_check

from actors.base import Supervised


@dataclass(frozen=True)
class Ended:                    # a script child ended: publish its exit code
    event_type: str


class RippleActor(Supervised):
    name = "ripple"

    def __init__(self, supervisor, runtime) -> None:
        super().__init__(supervisor, runtime)
        self.kept: dict = {}        # event type -> the newest event whose ripple was skipped
        rt = runtime
        self.wakeup = ripple_check.WakeupWatch(lambda: ripple_check.service_view(rt.cfg),
                                               lambda view: rt.board.put("wakeup", view))

    def on_start(self) -> None:
        super().on_start()
        rt = self.rt
        rt.ripple.on_exit = lambda event_type: rt.tell("ripple", Ended(event_type))
        self.wakeup.request()

    def on_Ended(self, msg) -> None:
        pass                    # the snapshot published after every message carries the exit code

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
        self.wakeup.request()
        return outcome

    def snapshot(self) -> dict:
        return {"type": self.rt.cfg.ripple.type or "off", "running": self.rt.ripple.running_count(),
                "waiting_to_retry": sorted(self.kept), "last": self.rt.ripple.last_results()}
