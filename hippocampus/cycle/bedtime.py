"""When bedtime is, whether a sleep is a catch-up, and asking the main model for a brief."""
from __future__ import annotations

import datetime as dt
import logging
from typing import Mapping, Optional

from hippocampus.config import SleepConfig

log = logging.getLogger("hippocampus.bedtime")

BRIEF_TOPIC = "hippocampus, brief"
REQUEST_TTL = 6 * 3600


def bedtime_at(cfg: SleepConfig, last_ok_at: Optional[float], now: float,
               first_check_at: Optional[float] = None) -> float:
    """The next sleep.at (local HH:MM) after the last sleep, or interval_seconds after it. A store that never
    slept is due from its first check (with sleep.at: the next HH:MM after it), before any check now."""
    if cfg.at:
        hh, mm = (int(x) for x in cfg.at.split(":"))
        base = last_ok_at or first_check_at or now - 1
        local = dt.datetime.fromtimestamp(base)
        due = local.replace(hour=hh, minute=mm, second=0, microsecond=0)
        if due.timestamp() <= base:
            due = (local + dt.timedelta(days=1)).replace(hour=hh, minute=mm, second=0, microsecond=0)
        return due.timestamp()
    if not last_ok_at:
        return first_check_at or now
    return last_ok_at + cfg.interval_seconds


def bedtime(cfg: SleepConfig, state: Mapping, now: float) -> float:
    """The one bedtime: the decision's, the brief request's and /status's, from the state's two clocks."""
    return bedtime_at(cfg, state.get("last_sleep_ok_at"), now, state.get("first_check_at"))


def is_catch_up(cfg: SleepConfig, last_ok_at: Optional[float], now: float) -> bool:
    """The first sleep on a store, or the first after a gap longer than gap_grace_intervals bedtimes."""
    if not last_ok_at:
        return True
    return now - last_ok_at > cfg.gap_grace_intervals * cfg.interval_seconds


def hhmm(ts: float) -> str:
    return dt.datetime.fromtimestamp(ts).strftime("%H:%M")


def request_text(due_at: float, now: float, forced: bool) -> str:
    if forced:
        head = ("A sleep was started by hand. The hippocampus wants a brief before it drafts, "
                "and will sleep at its next check after the brief arrives.")
    elif due_at > now:
        head = f"The hippocampus wants a brief before it sleeps at {hhmm(due_at)}."
    else:
        head = "The hippocampus wants a brief before it sleeps, soon: bedtime has passed."
    return (head + " A brief says what mattered since the last sleep; promote_hints name running bits and "
            "real lessons worth keeping (short phrases copied from the memories), noise_hints name "
            "one-offs to let go. Write it with submit_brief on Memory, then nudge the hippocampus.")
