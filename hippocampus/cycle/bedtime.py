"""When bedtime is, and whether a sleep is a catch-up: computed here only."""
from __future__ import annotations

import datetime as dt
from typing import Mapping, Optional

from hippocampus.config import SleepConfig


def bedtime_at(cfg: SleepConfig, last_ok_at: Optional[float], now: float,
               first_check_at: Optional[float] = None) -> float:
    """The next sleep.at (local HH:MM) after the last sleep, or interval_seconds after it. A store that never
    slept is due from its first check (with sleep.at: the next HH:MM after it), before any check now."""
    if cfg.at:
        hh, mm = (int(x) for x in cfg.at.split(":"))
        base = last_ok_at or first_check_at or now - 1
        due = dt.datetime.fromtimestamp(base).replace(hour=hh, minute=mm, second=0, microsecond=0)
        if due.timestamp() <= base:
            due += dt.timedelta(days=1)
        return due.timestamp()
    if not last_ok_at:
        return first_check_at or now
    return last_ok_at + cfg.interval_seconds


def last_slept(state: Mapping) -> Optional[float]:
    """The newest sleep on this Memory that this copy knows of: its own, or another copy's."""
    return max(state.get("last_sleep_ok_at") or 0, state.get("memory_slept_at") or 0) or None


def bedtime(cfg: SleepConfig, state: Mapping, now: float) -> float:
    """The one bedtime (the decision's, the brief request's and /status's), from the state's clocks."""
    return bedtime_at(cfg, last_slept(state), now, state.get("first_check_at"))


def is_catch_up(cfg: SleepConfig, last_ok_at: Optional[float], now: float) -> bool:
    """The first sleep on a store, or the first after a gap longer than gap_grace_intervals bedtimes."""
    return not last_ok_at or now - last_ok_at > cfg.gap_grace_intervals * cfg.interval_seconds
