"""Bedtime and the brief gate (issue 6), on the real SerenMemory with an injected clock."""
from __future__ import annotations

import datetime as dt
import time

from hippocampus.cycle import executor
from hippocampus.cycle.bedtime import bedtime_at
from tests.harness.clock import FakeClock
from hippocampus.config import SleepConfig
from tests.conftest import event_types

HOUR, DAY = 3600.0, 86400.0


def brief_notes(hand) -> list:
    return [n for n in hand.near() if n["metadata"].get("topic") == "hippocampus, brief"]


def test_before_bedtime_no_miss_past_it_misses_and_every_third_asks_once(make_ctx, hand):
    clock = FakeClock(time.time())
    ctx = make_ctx(clock=clock, sleep={"interval_seconds": 8 * HOUR})
    ctx.state.set(last_sleep_ok_at=clock.now())               # slept just now: bedtime in 8 h
    for _ in range(4):
        r = executor.check(ctx).to_dict()
        assert r["status"] == "not_bedtime" and r["misses"] == 0
        clock.advance(HOUR)
    clock.advance(5 * HOUR)                                     # past bedtime
    statuses = [executor.check(ctx).to_dict() for _ in range(6)]
    assert [s["misses"] for s in statuses] == [1, 2, 3, 4, 5, 6]
    requested = [e for e in ctx.events.list() if e["type"] == "brief_requested"]
    assert len(requested) == 2                                  # on the third and the sixth
    assert len(brief_notes(hand)) == 1                          # and still one note
    note = brief_notes(hand)[0]
    assert "submit_brief" in note["content"]
    assert note["metadata"]["expires_at"] > clock.now()


def test_sleep_at_is_the_next_local_time_including_across_midnight():
    cfg = SleepConfig(at="03:30")
    evening = dt.datetime(2026, 11, 30, 22, 15).timestamp()
    due = dt.datetime.fromtimestamp(bedtime_at(cfg, evening, evening + 60))
    assert (due.day, due.hour, due.minute) == (1, 3, 30) and due.month == 12
    early = dt.datetime(2026, 11, 30, 1, 0).timestamp()
    due = dt.datetime.fromtimestamp(bedtime_at(cfg, early, early + 60))
    assert (due.day, due.hour, due.minute) == (30, 3, 30)
    never = dt.datetime(2026, 11, 30, 4, 0).timestamp()
    due = dt.datetime.fromtimestamp(bedtime_at(cfg, None, never))
    assert (due.day, due.hour, due.minute) == (1, 3, 30)


def test_a_brief_mid_afternoon_is_slept_on_at_the_next_check_and_the_note_goes(make_ctx, hand):
    clock = FakeClock(time.time())
    ctx = make_ctx(clock=clock, sleep={"interval_seconds": 20 * HOUR, "brief_check_misses": 1})
    ctx.state.set(last_sleep_ok_at=clock.now() - 21 * HOUR)   # past bedtime
    assert executor.check(ctx).to_dict()["status"] == "waiting_for_brief"
    assert len(brief_notes(hand)) == 1
    for i in range(3):
        hand.short(f"we walked to the forest, part {i}", topic="forest")
    hand.brief("I'm off to the forest")
    r = executor.check(ctx).to_dict()
    assert r["status"] == "sleeping" and r["sleep"]["draft_id"]
    assert r["sleep"]["brief_answered"] is True
    assert brief_notes(hand) == []


def test_sleep_by_hand_asks_first_then_sleeps_on_the_brief(make_ctx, hand):
    ctx = make_ctx()
    for i in range(3):
        hand.short(f"the kettle whistled at dawn {i}", topic="kettle")
    asked = executor.sleep_by_hand(ctx, ask_for_brief=True).to_dict()
    assert asked["asked_for_brief"] is True and asked["draft_id"] is None
    assert len(brief_notes(hand)) == 1 and hand.drafts() == []
    assert ctx.state.get("last_sleep") is None                  # no sleep recorded
    hand.brief("the kettle")
    r = executor.check(ctx).to_dict()
    assert r["status"] == "sleeping" and r["sleep"]["draft_id"]
    assert brief_notes(hand) == []


def test_without_brief_drafts_at_once_and_an_open_chain_refuses(make_ctx, hand):
    ctx = make_ctx()
    for i in range(3):
        hand.short(f"the kettle whistled at dawn {i}", topic="kettle")
    r = executor.sleep_by_hand(ctx, ask_for_brief=False).to_dict()
    assert r["draft_id"] and r["brief_id"] is None
    again = executor.sleep_by_hand(ctx, ask_for_brief=False).to_dict()
    assert again["refused"] is True and again["status"] == "chain_open"
    assert len(hand.drafts()) == 1


def test_thirty_days_away_no_draft_no_age_out_flags_still_purged_first_back_is_catch_up(make_ctx, hand, memory):
    memory.set_lifetimes(short_term_seconds=int(2 * DAY))
    clock = FakeClock(time.time())
    ctx = make_ctx(clock=clock, sleep={"interval_seconds": 20 * HOUR})
    # a core to forget later: land one through a sleep
    for i in range(2):
        hand.short(f"a secret I should not have said {i}", topic="secret")
    hand.brief("secrets")
    d = executor.check(ctx).to_dict()["sleep"]["draft_id"]
    hand.approve_all(d)
    executor.tend(ctx)                                           # the chain lands and closes
    core = next(e for e in hand.long() if "secret" in e["content"])
    kept = hand.short("a fragment from before the month away", topic="old", ts=time.time() - 3 * DAY)
    started = time.monotonic()
    for day in range(30):
        clock.advance(DAY)
        if day == 10:
            hand.forget(core["id"], "please forget this")
        executor.check(ctx)
    assert time.monotonic() - started < 60
    assert len(hand.drafts()) == 1                               # only the one from before
    assert kept in [s["id"] for s in hand.shorts()]              # nothing aged out
    assert core["id"] in [t["id"] for t in hand.tombstones()]    # the flag was still purged
    hand.brief("back from a month away")
    back = executor.check(ctx).to_dict()["sleep"]
    assert back["catch_up"] is True and "catch_up" in event_types(ctx)
    assert kept in [s["id"] for s in hand.shorts()]
