"""A night's budget (sleep.budget): model calls, answer tokens and wall seconds, and the breaker (answers cut at
the answer cap, one after another). Pure: a Meter counts what each model call cost, and before the next call says
which limit is spent (None: go on). A limit of 0 is off. A sleep meters its night; a tend meters each chain's
redraft (one chain step) on its own."""
from __future__ import annotations

import contextlib
import math
import threading
from dataclasses import dataclass
from typing import Any, Optional

# checked in this order: the breaker names the likeliest cause (a model running away), the wall the last
LIMITS = ("cut_in_a_row", "calls", "answer_tokens", "wall_seconds")
CHARS_PER_TOKEN = 4         # the estimate when the server gives no usage: about four characters a token


@dataclass(frozen=True)
class Spent:
    limit: str              # one of LIMITS
    allowed: float          # the setting's value
    used: float             # what the night had used when it stopped

    @property
    def setting(self) -> str:
        return f"sleep.budget.{self.limit}"

    def reason(self) -> str:
        """Why, in a person's words, naming the setting to raise."""
        allowed = f"{self.allowed:g}"
        if self.limit == "cut_in_a_row":
            return (f"{int(self.used)} answers in a row ran into the answer cap (model.max_tokens) and were cut off, "
                    f"so the breaker stopped the model running away (raise {self.setting}, now {allowed}, or "
                    "model.max_tokens if the answers need the room)")
        if self.limit == "calls":
            calls = f"{int(self.used)} model call{'' if int(self.used) == 1 else 's'}"
            return f"the night made {calls}, all that {self.setting} ({allowed}) allows"
        if self.limit == "answer_tokens":
            return (f"the model's answers came to {int(self.used)} tokens, the most {self.setting} ({allowed}) "
                    "allows")
        return f"the night ran {self.used:.0f} s, the most {self.setting} ({allowed}) allows"

    def to_dict(self) -> dict:
        return {"limit": self.limit, "setting": self.setting, "allowed": self.allowed, "used": self.used,
                "reason": self.reason()}


class BudgetSpent(Exception):
    """Raised before a model call the budget does not allow: the caller stops drafting and keeps the rest."""

    def __init__(self, spent: Spent) -> None:
        super().__init__(spent.reason())
        self.spent = spent


class Meter:
    """limits: anything with calls, answer_tokens, wall_seconds and cut_in_a_row (the config's BudgetConfig).
    started, now: seconds on one monotonic clock, given by the caller. Safe for calls drafted at once
    (model.parallel): check() books the call it allows, so calls in flight count against sleep.budget.calls,
    and count() (or unbook(), for a call never sent) settles it; one at a time, nothing is booked at a check."""

    def __init__(self, limits: Any, started: float) -> None:
        self.limits, self.started = limits, started
        self.calls = 0
        self.answer_tokens = 0
        self.cut_in_a_row = 0           # the answers cut at the cap since the last that was not
        self.booked = 0                 # calls check() allowed that have not been counted yet
        self._lock = threading.Lock()
        self._held = threading.local()  # a call booked for this thread when its pile was started (hold())

    def count(self, tokens: int = 0, cut: bool = False) -> None:
        """One model call's cost (a call that failed: no tokens, not cut)."""
        with self._lock:
            self.booked = max(0, self.booked - 1)
            self.calls += 1
            self.answer_tokens += max(0, int(tokens))
            self.cut_in_a_row = self.cut_in_a_row + 1 if cut else 0

    def unbook(self) -> None:
        """A call check() allowed that was never sent (the model did not come up, the service stopped)."""
        with self._lock:
            self.booked = max(0, self.booked - 1)

    def used(self, limit: str, now: float) -> float:
        if limit == "calls":
            return self.calls + self.booked
        return round(now - self.started, 3) if limit == "wall_seconds" else getattr(self, limit)

    def spent(self, now: float) -> Optional[Spent]:
        """The first limit reached, or None."""
        for limit in LIMITS:
            allowed = getattr(self.limits, limit)
            used = self.used(limit, now)
            if allowed and used >= allowed:
                return Spent(limit, allowed, used)
        return None

    def hold(self) -> None:
        """This thread's next check() is the call booked already, in pile order, when its pile was started."""
        self._held.booked = True

    def drop(self) -> None:
        """This thread's booked call was never checked (its pile failed before the call): unbooked."""
        if getattr(self._held, "booked", False):
            self._held.booked = False
            self.unbook()

    def check(self, now: float) -> None:
        """BudgetSpent when a limit is reached; else the call is booked until count() or unbook()."""
        if getattr(self._held, "booked", False):
            self._held.booked = False
            return
        with self._lock:
            spent = self.spent(now)
            if spent is not None:
                raise BudgetSpent(spent)
            self.booked += 1

    def to_dict(self, now: float) -> dict:
        return {"calls": self.calls, "answer_tokens": self.answer_tokens, "wall_seconds": self.used("wall_seconds", now)}


def answer_tokens(answer: Any) -> int:
    """The answer's tokens: the server's usage.completion_tokens (a finite count), else an estimate from its text."""
    usage = getattr(answer, "usage", None) or {}
    given = usage.get("completion_tokens") if isinstance(usage, dict) else None
    if isinstance(given, (int, float)) and not isinstance(given, bool) and 0 <= given < math.inf:
        return int(given)
    return math.ceil(len(getattr(answer, "text", "") or "") / CHARS_PER_TOKEN)


def was_cut(answer: Any) -> bool:
    """The answer ran into the answer cap (the server's finish_reason "length")."""
    return getattr(answer, "finish_reason", None) == "length"


@contextlib.contextmanager
def metered(holder: Any, meter: Meter):
    """holder.meter is `meter` for the block (every call_model through holder counts against it), then as before."""
    before = getattr(holder, "meter", None)
    holder.meter = meter
    try:
        yield meter
    finally:
        holder.meter = before
