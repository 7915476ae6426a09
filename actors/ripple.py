"""The ripple actor: owns the Ripple, which wakes the main model, one run at a time per event.

A ripple skipped because the last one for its event still runs is kept and fired again on the next tick.
The Ripple and the ripples kept outlive a crash or restart of this actor (left to the next instance in the
registry's estate), so a wake-up still running is never started twice and one kept is never lost. One instance
fires at a time (base.InTurn), so the wake-ups go out in the order their events happened.
"""
from __future__ import annotations

import pykka
from pykka.typing import ActorMemberMixin, proxy_method

from hippocampus.cycle import briefs
from hippocampus.ripple.fire import Ripple

from actors.base import DOWN_OK, InTurn, keep, kept_for, oldest_first, take_all

MISSED_MAX = 100        # events kept for a ripple actor that is down; past this the oldest go
STOPPED = "the service stopped before it went out"
DROPPED = "more events waited for the ripple actor while it was down than it keeps"
REVIEWS = ("draft_submitted", "tend_resubmitted")     # the wake-ups that ask the main model to review a draft


class RippleActor(InTurn):
    name = "ripple"

    def __init__(self, supervisor, runtime) -> None:
        super().__init__(supervisor, runtime)
        self.kept: dict = self.inherit("kept", dict)     # event type -> the newest event whose ripple was skipped
        self.ripple = self.inherit("wakeups", lambda: Ripple(runtime.cfg.ripple, log_dir=runtime.cfg.state_dir))
        self.ripple.on_exit = runtime.ripple_ended       # the reaper's thread tells; this mailbox publishes

    def catch_up(self) -> None:
        """Told while no instance was up, or left unread by the last: fired first."""
        for event in oldest_first(missed(self.rt.registry)):
            if self.ripple.wants(event["type"]) and not self._stale(event):
                self._fire(event)

    def dropped(self, method: str, *args) -> None:
        if method == "fire":
            keep_missed(self.rt, args[0])

    def on_stop(self) -> None:
        super().on_stop()
        if self.rt.stopping:        # the service stops; an operator's restart leaves the wake-ups running
            self.ripple.shutdown()
            for event in self.kept.values():     # held in memory only: never fired, and the History says so
                self.rt.ctx.events.annotate(event["seq"], ripple={**(event.get("ripple") or {}), "dropped": STOPPED})

    def ended(self, event_type: str) -> None:
        pass                    # the snapshot published after every message carries the exit code

    def fire(self, event: dict):
        self.catch_up()         # one kept in the moment between this instance's start and its registration
        return self._fire(event) if self.ripple.wants(event["type"]) else None

    def retry_skipped(self) -> None:
        """Told at a tick's end, once its lock is let go. A tick that took the cycle since (a nudge's) may be about
        to sleep on the brief a kept wake-up asked for, with the small model: the kept ones wait for its end."""
        held = self.rt.ctx.cycle.holder()
        if held is not None and held.what == "tick":
            return
        for type_, event in list(self.kept.items()):
            if not self.ripple.busy(type_) and self.kept.pop(type_, None) is not None:   # one instance fires it
                if not self._stale(event):
                    self._fire(event, retry=True)

    def _stale(self, event: dict) -> bool:
        """A wake-up answered while it waited (firing it now wakes the main model for nothing): dropped, and the
        History says why."""
        if event["type"] == "brief_requested" and briefs.brief_wanted(self.rt.ctx) is None:
            why = "the brief arrived"
        elif reviewed(self.rt.ctx, event):
            why = "its draft was reviewed while it waited"
        else:
            return False
        self.rt.ctx.events.annotate(event["seq"], ripple={**(event.get("ripple") or {}), "dropped": why})
        return True

    def _fire(self, event: dict, retry: bool = False) -> dict:
        outcome = self.ripple.fire(event)
        if retry:
            outcome = {**outcome, "retried": True}
        if outcome.get("skipped"):
            older = self.kept.get(event["type"])
            self.kept[event["type"]] = event
            if older is not None and older.get("seq") != event.get("seq"):    # one kept per kind: the newer goes
                self.rt.ctx.events.annotate(older["seq"], ripple={**(older.get("ripple") or {}),
                                                                  "dropped": "a newer one of its kind replaced it"})
        self.rt.ctx.events.annotate(event["seq"], ripple=outcome)
        with DOWN_OK:
            self.rt.wakeup().recheck.defer()
        return outcome

    def snapshot(self) -> dict:
        return {"type": self.rt.cfg.ripple.type or "off", "running": self.ripple.running_count(),
                "waiting_to_retry": sorted(self.kept), "last": self.ripple.last_results()}


def reviewed(ctx, event: dict) -> bool:
    """A review wake-up whose draft Memory no longer holds pending. Memory not answering (or not knowing the
    draft): False, so it fires as it would have."""
    if event["type"] not in REVIEWS or not event.get("draft_id"):
        return False
    try:
        return ctx.memory.draft(str(event["draft_id"])).get("status") not in (None, "pending")
    except Exception:  # noqa: BLE001 - the wake-up goes out as before
        return False


def missed(registry):
    """The events no ripple actor has read (it was down, or died before reading them): the next one fires them."""
    return kept_for(registry, RippleActor.name, MISSED_MAX)


def left_at_stop(rt) -> None:
    """The service has stopped: each event still kept for a ripple actor (it was down) was never fired; its
    History says so, as a kept one's does."""
    for event in take_all(missed(rt.registry)):
        rt.ctx.events.annotate(event["seq"], ripple={**(event.get("ripple") or {}), "dropped": STOPPED})


def keep_missed(rt, event: dict) -> None:
    """An event for a ripple actor that is down, kept for the next one if it is one that wakes the model."""
    wakeups = rt.registry.estate(RippleActor.name).get("wakeups")
    if wakeups is None or wakeups.wants(event["type"]):
        keep(missed(rt.registry), event, lambda old: lost(rt, old, wakeups), RippleActor.name)


def lost(rt, event: dict, wakeups=None, why: str = DROPPED) -> None:
    """An event that would have woken the model, dropped before any ripple actor read it: its History says why."""
    wakeups = rt.registry.estate(RippleActor.name).get("wakeups") if wakeups is None else wakeups
    if wakeups is not None and wakeups.wants(event["type"]):
        rt.ctx.events.annotate(event["seq"], ripple={**(event.get("ripple") or {}), "dropped": why})


class RippleProxy(ActorMemberMixin, pykka.ActorProxy[RippleActor]):
    fire = proxy_method(RippleActor.fire)
    retry_skipped = proxy_method(RippleActor.retry_skipped)
    ended = proxy_method(RippleActor.ended)
