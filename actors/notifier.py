"""The notifier actor: owns the Webhook; carries each event to it, best effort, and to the ripple. An event told
while it is down (restarting, or failed until the operator's restart) waits in the registry's estate for the next
instance, which carries it first. One instance carries at a time: the next starts carrying once the last has ended
(what it was told goes out first), so the events go out in the order they happened."""
from __future__ import annotations

import pykka
from pykka.typing import ActorMemberMixin, proxy_method

from hippocampus import outbound
from hippocampus.ripple.fire import Webhook

from actors import ripple
from actors.base import InTurn, keep, kept_for, oldest_first, take_all

WAITING_MAX = 1000      # events kept for a notifier that is down; past this the oldest go
STOPPED = "not sent: the service was stopping"
DROPPED = "not sent: dropped, as more events waited for the notifier while it was down than it keeps"


class NotifierActor(InTurn):
    """The event is already in the log when it gets here; what the webhook said is recorded on it."""
    name = "notifier"

    def __init__(self, supervisor, runtime) -> None:
        super().__init__(supervisor, runtime)
        # the stop cuts the post in flight (Runtime.begin_stop): it never waits on it
        self.session = self.inherit("session", outbound.CancellableSession)
        self.webhook = Webhook(runtime.cfg.notify, self.session)
        self.delivered = 0
        self.failed = 0

    def deliver(self, event: dict) -> None:
        self.catch_up()
        self._deliver(event)

    def dropped(self, method: str, *args) -> None:
        if method == "deliver":
            keep_waiting(self.rt, args[0])

    def catch_up(self) -> None:
        """The events told while no instance was up (or left unread by the last one), in order, first."""
        for event in oldest_first(waiting(self.rt.registry)):
            self._deliver(event)

    def _deliver(self, event: dict) -> None:
        try:
            self.rt.ripple().fire.defer(event)      # the ripple actor knows which events it wakes the model for
        except pykka.ActorDeadError:                # down: its next instance fires it
            ripple.keep_missed(self.rt, event)
        if self.webhook.wants(event["type"]):
            outcome = {} if self.rt.stopping else self.webhook.deliver(event)
            self.session.close()    # no connection kept between posts (its pool only: a later post opens anew)
            if self.rt.stopping and not outcome.get("delivered"):
                outcome = {"delivered": False, "error": STOPPED}     # never posted, or cut short by the stop
            if outcome.get("delivered"):
                self.delivered += 1
            else:
                self.failed += 1
            self.rt.ctx.events.annotate(event["seq"], delivery=outcome)

    def snapshot(self) -> dict:
        return {"webhook": self.webhook.configured, "delivered": self.delivered, "failed": self.failed}


def left_at_stop(rt) -> None:
    """The service has stopped: each event no notifier carried (it was down) says so on its record; the ones
    that would have woken the model say so too."""
    for event in take_all(waiting(rt.registry)):
        _lost(rt, event, STOPPED, ripple.STOPPED)     # said here: past the ripple's cap, some would be "dropped"


def keep_waiting(rt, event: dict) -> None:
    """An event for a notifier that is down, kept for the next one; past WAITING_MAX the oldest's record says it
    was dropped (and never woke the model, if it would have)."""
    keep(waiting(rt.registry), event, lambda old: _lost(rt, old), NotifierActor.name)


def _lost(rt, event: dict, why: str = DROPPED, wakeup: str = ripple.DROPPED) -> None:
    """An event no notifier carried: its record says why, and that it never woke the model (if it would have)."""
    if Webhook(rt.cfg.notify).wants(event["type"]):
        rt.ctx.events.annotate(event["seq"], delivery={"delivered": False, "error": why})
    ripple.lost(rt, event, why=wakeup)


def waiting(registry):
    """The events no notifier has carried yet (it was down, or died before reading them): the next one does."""
    return kept_for(registry, NotifierActor.name, WAITING_MAX)


class NotifierProxy(ActorMemberMixin, pykka.ActorProxy[NotifierActor]):
    deliver = proxy_method(NotifierActor.deliver)
