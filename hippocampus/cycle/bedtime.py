"""When bedtime is, and whether a sleep is a catch-up: computed here only. A time another copy's note gave
(memory_slept_at) counts only while it is a sane time no later than now: no note moves bedtime out of reach."""
from __future__ import annotations

import datetime as dt
from typing import Mapping, Optional

from hippocampus.config import SleepConfig
from hippocampus.cycle.notes import CLOCK_SKEW_SECONDS, sane_time


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


def memory_slept(state: Mapping, now: float) -> Optional[float]:
    """Another copy's newest sleep as the state keeps it, unless it is no time or later than now (a state file
    written before notes were checked may hold one)."""
    at = sane_time(state.get("memory_slept_at"))
    return at if at is not None and at <= now + CLOCK_SKEW_SECONDS else None


def last_slept(state: Mapping, now: float) -> Optional[float]:
    """The newest sleep on this Memory that this copy knows of: its own (a night the budget stopped too), or
    another copy's."""
    return max(own_slept(state) or 0, memory_slept(state, now) or 0) or None


def own_slept(state: Mapping) -> Optional[float]:
    """This copy's last sleep that did not fail (a state written before last_slept_at has last_sleep_ok_at)."""
    return max(sane_time(state.get("last_slept_at")) or 0, sane_time(state.get("last_sleep_ok_at")) or 0) or None


def bedtime(cfg: SleepConfig, state: Mapping, now: float) -> float:
    """The one bedtime (the decision's, the brief request's and /status's), from the state's clocks."""
    return bedtime_at(cfg, last_slept(state, now), now, sane_time(state.get("first_check_at")))


def is_catch_up(cfg: SleepConfig, last_ok_at: Optional[float], now: float) -> bool:
    """The first sleep on a store, or the first after a gap longer than gap_grace_intervals bedtimes."""
    return not last_ok_at or now - last_ok_at > cfg.gap_grace_intervals * cfg.interval_seconds
