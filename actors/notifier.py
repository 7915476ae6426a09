"""The notifier actor: carries each event to the webhook (best effort) and the ripple.

The event is already in the log when it gets here; what the webhook said is
recorded on it. A webhook that hangs delays nothing but this mailbox.
"""
from __future__ import annotations

from actors.base import Supervised
from actors.messages import Fire


class NotifierActor(Supervised):
    name = "notifier"

    def __init__(self, supervisor, runtime) -> None:
        super().__init__(supervisor, runtime)
        self.delivered = 0
        self.failed = 0

    def on_Publish(self, msg) -> None:
        event = msg.event
        if self.rt.ripple.wants(event["type"]):
            self.rt.tell("ripple", Fire(event))
        if self.rt.webhook.wants(event["type"]):
            outcome = self.rt.webhook.deliver(event)
            if outcome.get("delivered"):
                self.delivered += 1
            else:
                self.failed += 1
            self.rt.ctx.events.annotate(event["seq"], delivery=outcome)

    def snapshot(self) -> dict:
        return {"webhook": self.rt.webhook.configured, "delivered": self.delivered, "failed": self.failed}
