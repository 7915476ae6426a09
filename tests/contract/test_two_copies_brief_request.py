"""Two copies of the service on one real SerenMemory ask the main model for a brief once: the copy that asked
holds the "brief_request" claim across checks a long tick apart, and a sleep started by hand on the other copy
asks nothing more, saying which copy asked."""
from __future__ import annotations

import os
import time

import pytest

from hippocampus.cycle import copies, executor
from hippocampus.cycle.bedtime import bedtime
from hippocampus.status.lists import result
from tests.harness.clock import FakeClock

BRIEF = "hippocampus, brief"


def _requests(hand) -> list:
    return [n for n in hand.near() if (n.get("metadata") or {}).get("topic") == BRIEF]


def _claims(hand) -> list:
    return [n for n in hand.near() if (n.get("metadata") or {}).get("claim") == "brief_request"]


def _copies(make_ctx, tmp_path, clock, **sleep) -> list:
    """Two running copies: each has told the Memory it runs, as the service does at its start."""
    ctxs = [make_ctx(clock=clock, sleep={"state_path": str(tmp_path / name / "state.json"),
                                         "brief_check_misses": 1, **sleep}) for name in ("a", "b")]
    for ctx in ctxs:
        copies.announce(ctx)
    return ctxs


def test_a_copy_asking_on_a_long_tick_keeps_its_claim_between_checks(make_ctx, hand, tmp_path):
    clock = FakeClock(time.time())
    a, b = _copies(make_ctx, tmp_path, clock, tick_seconds=900)
    t0 = clock.now()
    for k in range(4):                                 # a checks every 900 s, b 700 s after each of a's checks
        clock.set(t0 + 900 * k)
        assert executor.check(a).to_dict()["status"] == "waiting_for_brief"
        clock.set(t0 + 900 * k + 700)
        checked = executor.check(b).to_dict()
        assert checked["status"] == "other_copy", (k, checked)
        assert checked["other"]["folder"] == str((tmp_path / "a").resolve()), checked
        assert len(_requests(hand)) == 1, (k, _requests(hand))     # one note asks, so the main model wakes once
    assert [e for e in b.events.list() if e["type"] == "brief_requested"] == []


def test_a_sleep_by_hand_on_the_other_copy_asks_nothing_more_and_names_the_copy_that_asked(make_ctx, hand,
                                                                                          tmp_path):
    a, b = _copies(make_ctx, tmp_path, FakeClock(time.time()))
    assert executor.sleep_by_hand(a).to_dict()["asked_for_brief"] is True         # by hand: asked, claim held
    assert len(_requests(hand)) == 1 and len(_claims(hand)) == 1
    assert executor.check(b).to_dict()["status"] == "other_copy"                    # b's check leaves it to a
    answer = executor.sleep_by_hand(b).to_dict()
    assert answer["status"] == "other_copy" and answer["refused"] is True and "asked_for_brief" not in answer
    assert len(_requests(hand)) == 1, _requests(hand)                               # no second request
    said = result("sleep", answer)
    assert said["level"] == "warn", said
    assert said["text"].startswith(f"Nothing started: no brief was waiting, and another copy of seren-hippocampus "
                                   f"(pid {os.getpid()} on "), said
    assert f"state folder {(tmp_path / 'a').resolve()}) asks the main model for a brief already" in said["text"]
    assert "the sleep starts at a check after that brief arrives" in said["text"], said
    for i in range(3):
        hand.short(f"we walked to the forest, part {i}", topic="forest")
    hand.brief("I'm off to the forest")
    assert executor.check(a).to_dict()["status"] == "sleeping"        # the copy that asked sleeps on it
    assert _claims(hand) == [] and _requests(hand) == []                 # and lets go of its claim and note


def test_a_sleep_by_hand_before_bedtime_keeps_its_claim_until_the_brief_arrives(make_ctx, hand, tmp_path):
    """a slept an hour ago, so its checks are before bedtime; b never slept, so every check of b's is a miss.
    a's ask by hand is renewed at a's checks, so b, missing all along, never asks a second time."""
    clock = FakeClock(time.time())
    a, b = _copies(make_ctx, tmp_path, clock, tick_seconds=900)
    t0 = clock.now()
    a.state.set(last_sleep_ok_at=t0 - 3600)
    assert executor.sleep_by_hand(a).to_dict()["asked_for_brief"] is True
    lease_until = _claims(hand)[0]["metadata"]["until"]
    for k in range(1, 6):                          # 4500 s: past the first lease (2700 s) well before any brief
        clock.set(t0 + 900 * k)
        assert executor.check(a).to_dict()["status"] == "not_bedtime"
        clock.set(t0 + 900 * k + 700)
        checked = executor.check(b).to_dict()
        assert checked["status"] == "other_copy", (k, checked)
    assert clock.now() > lease_until
    assert len(_requests(hand)) == 1, _requests(hand)          # the main model is asked, and woken, once
    assert [e for e in b.events.list() if e["type"] == "brief_requested"] == []


def test_after_one_copy_slept_the_other_waits_for_the_next_bedtime_too(make_ctx, hand, tmp_path):
    """Bedtime is the Memory's, not a copy's: b never slept itself, but a slept on tonight's brief, so b's next
    checks are before bedtime and nobody asks the main model for a brief again until the next one; and b's
    first sleep, a night later, is no catch-up (the Memory has no gap)."""
    clock = FakeClock(time.time())
    a, b = _copies(make_ctx, tmp_path, clock, interval_seconds=86400)
    for i in range(3):
        hand.short(f"we walked to the forest, part {i}", topic="forest")
    hand.brief("I'm off to the forest")
    assert executor.check(a).to_dict()["status"] == "sleeping"
    slept_at = clock.now()
    [draft] = hand.drafts("pending")
    hand.approve_all(draft["id"])
    assert executor.tend(a).to_dict()["closed"]                  # the chain landed and is closed
    for k in range(1, 4):
        clock.set(slept_at + 900 * k)
        assert executor.check(b).to_dict()["status"] == "not_bedtime", k
    assert _requests(hand) == [] and [e for e in b.events.list() if e["type"] == "brief_requested"] == []
    # /status's bedtime too; the time came back through Memory's JSON, so to the millisecond
    due = a.state.get("last_sleep_ok_at") + 86400
    assert bedtime(b.cfg.sleep, b.state, clock.now()) == pytest.approx(due, abs=1e-3)
    clock.set(slept_at + 86400 + 1)
    assert executor.check(b).to_dict()["status"] == "waiting_for_brief"       # the next bedtime: one copy asks
    assert len(_requests(hand)) == 1
    hand.short("we walked to the forest again", topic="forest")
    hand.brief("the forest again")
    nxt = executor.check(b).to_dict()
    assert nxt["status"] == "sleeping" and nxt["sleep"]["catch_up"] is False, nxt   # the Memory slept last night
    slept = [n for n in hand.near() if (n.get("metadata") or {}).get("topic") == "hippocampus, slept"]
    assert [n["metadata"]["folder"] for n in slept] == [str((tmp_path / "b").resolve())], slept   # the newest only


def test_a_check_by_hand_that_leaves_the_brief_request_to_the_other_copy_says_so_not_that_it_sleeps(
        make_ctx, hand, tmp_path):
    """Found: POST /check and MCP's check_now answered 'Checked: another copy is sleeping.' while the other copy was
    asking the main model for a brief: a main model told a sleep runs does not write the brief it waits for."""
    a, b = _copies(make_ctx, tmp_path, FakeClock(time.time()))
    assert executor.check(a).to_dict()["status"] == "waiting_for_brief"             # a asks for the brief
    checked = executor.check(b).to_dict()
    assert checked["status"] == "other_copy", checked
    text = result("check", checked)["text"]
    assert "is sleeping" not in text and "asks the main model for a brief" in text, text
