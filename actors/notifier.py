"""The notifier actor: owns the Webhook; carries each event to it, best effort, and to the ripple."""
from __future__ import annotations

import pykka
from pykka.typing import ActorMemberMixin, proxy_method

from hippocampus.ripple.fire import Webhook

from actors.base import DOWN_OK, Supervised


class NotifierActor(Supervised):
    """The event is already in the log when it gets here; what the webhook said is recorded on it."""
    name = "notifier"

    def __init__(self, supervisor, runtime) -> None:
        super().__init__(supervisor, runtime)
        self.webhook = Webhook(runtime.cfg.notify)
        self.delivered = 0
        self.failed = 0

    def deliver(self, event: dict) -> None:
        with DOWN_OK:
            self.rt.ripple().fire.defer(event)      # the ripple actor knows which events it wakes the model for
        if self.webhook.wants(event["type"]):
            outcome = self.webhook.deliver(event)
            if outcome.get("delivered"):
                self.delivered += 1
            else:
                self.failed += 1
            self.rt.ctx.events.annotate(event["seq"], delivery=outcome)

    def snapshot(self) -> dict:
        return {"webhook": self.webhook.configured, "delivered": self.delivered, "failed": self.failed}


class NotifierProxy(ActorMemberMixin, pykka.ActorProxy[NotifierActor]):
    deliver = proxy_method(NotifierActor.deliver)
