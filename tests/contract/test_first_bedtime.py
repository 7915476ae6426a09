"""A fresh install asks for a brief (found by the soak, issue 17): a store that never slept is due from
its first check, and with sleep.at its first bedtime is the next HH:MM after that check.

The clock here moves on every read, as the wall clock does: with a clock that stood still between the
check's own `now` and bedtime's, the bug (bedtime "now", compared with an earlier now) never showed.
"""
from __future__ import annotations

import datetime as dt
import time

from hippocampus.cycle import executor
from hippocampus.cycle.bedtime import bedtime, bedtime_at
from tests.harness.clock import FakeClock
from hippocampus.config import SleepConfig


class MovingClock(FakeClock):
    """A fake clock that moves a millisecond each time it is read (and can be moved by hand)."""

    def now(self) -> float:
        return self.advance(0.001)


def brief_notes(hand) -> list:
    return [n for n in hand.near() if n["metadata"].get("topic") == "hippocampus, brief"]


def test_a_store_that_never_slept_counts_misses_from_its_first_check_and_asks(make_ctx, hand):
    clock = MovingClock(time.time())
    ctx = make_ctx(clock=clock, sleep={"brief_check_misses": 2})
    reports = [executor.check(ctx).to_dict() for _ in range(4)]
    assert [r["status"] for r in reports] == ["waiting_for_brief"] * 4, reports
    assert [r["misses"] for r in reports] == [1, 2, 3, 4]
    first = ctx.state.get("first_check_at")
    assert first is not None and first <= reports[0]["at"] + 0.01
    asked = [e for e in ctx.events.list() if e["type"] == "brief_requested"]
    assert len(asked) == 2 and len(brief_notes(hand)) == 1      # on the second miss, nudged on the fourth


def test_with_sleep_at_the_first_bedtime_is_the_next_hhmm_after_the_first_check(make_ctx, hand):
    ten_pm = dt.datetime.combine(dt.date.today(), dt.time(22, 0)).timestamp()
    clock = MovingClock(ten_pm)
    ctx = make_ctx(clock=clock, sleep={"at": "23:00", "brief_check_misses": 1})
    assert executor.check(ctx).to_dict()["status"] == "not_bedtime"
    due = bedtime(ctx.cfg.sleep, ctx.state, ctx.clock.now())
    assert dt.datetime.fromtimestamp(due).strftime("%H:%M") == "23:00" and due > ten_pm
    clock.set(due + 1)
    r = executor.check(ctx).to_dict()
    assert r["status"] == "waiting_for_brief" and r["misses"] == 1, r
    assert len(brief_notes(hand)) == 1


def test_bedtime_at_never_slept():
    cfg = SleepConfig(interval_seconds=3600)
    assert bedtime_at(cfg, None, 5000.0, first_check_at=1000.0) == 1000.0
    assert bedtime_at(cfg, None, 5000.0) == 5000.0                      # before any check: now
    assert bedtime_at(cfg, 2000.0, 5000.0, first_check_at=1000.0) == 5600.0   # a sleep on record wins
    at = SleepConfig(at="03:30")
    first = dt.datetime(2026, 11, 30, 4, 0).timestamp()
    later = dt.datetime(2026, 12, 1, 3, 31).timestamp()
    due = dt.datetime.fromtimestamp(bedtime_at(at, None, later, first_check_at=first))
    assert (due.month, due.day, due.hour, due.minute) == (12, 1, 3, 30)   # passed: a miss, not tomorrow
