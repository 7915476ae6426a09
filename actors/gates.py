"""The model gate the domain sees, carried to the lifecycle actor."""
from __future__ import annotations

import pykka

from hippocampus.model import ModelUnavailable

from .messages import Ensure, Handover, Release


class LifecycleGate:
    def __init__(self, runtime) -> None:
        self.rt = runtime

    def ensure(self) -> None:
        timeout = self.rt.cfg.model.lifecycle.ready_timeout_seconds + 60
        try:
            self.rt.ask("lifecycle", Ensure(), timeout=timeout)
        except pykka.ActorDeadError:
            raise ModelUnavailable("the model lifecycle actor is restarting; the next check tries again") from None
        except pykka.Timeout:
            raise ModelUnavailable(f"the model did not come up within {timeout:g} s") from None

    def release(self, busy_seconds: float) -> None:
        self.rt.tell("lifecycle", Release(busy_seconds))

    def handover(self) -> bool:
        try:
            return bool(self.rt.ask("lifecycle", Handover(), timeout=120))
        except (pykka.ActorDeadError, pykka.Timeout):
            return False
