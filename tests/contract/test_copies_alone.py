"""A copy alone on its Memory takes no claim (cycle/copies.py), yet a copy that starts later still leaves the
work to it: the brief request the first wrote carries its claim, and the first's "copy" note is kept fresh for as
long as it runs. On the real SerenMemory, no threads."""
from __future__ import annotations

import os
import time

from hippocampus.cycle import copies, executor
from tests.harness.clock import FakeClock

BRIEF, COPY = "hippocampus, brief", copies.COPY_TOPIC


def _notes(hand, topic: str) -> list:
    return [n for n in hand.near() if (n.get("metadata") or {}).get("topic") == topic]


def test_a_copy_started_while_one_alone_asks_for_a_brief_asks_nothing_more_and_names_it(make_ctx, hand, tmp_path):
    clock = FakeClock(time.time())
    a = make_ctx(clock=clock, sleep={"state_path": str(tmp_path / "a" / "state.json"), "brief_check_misses": 1})
    copies.announce(a)
    assert executor.check(a).to_dict()["status"] == "waiting_for_brief"       # alone: it asked, no claim note
    assert len(_notes(hand, BRIEF)) == 1
    assert [n for n in hand.near() if (n.get("metadata") or {}).get("topic") == "hippocampus, sleeping"] == []
    b = make_ctx(clock=clock, sleep={"state_path": str(tmp_path / "b" / "state.json"), "brief_check_misses": 1})
    copies.announce(b)                                                         # b starts
    checked = executor.check(b).to_dict()
    assert checked["status"] == "other_copy", checked
    assert checked["other"]["pid"] == os.getpid() and checked["other"]["folder"] == str((tmp_path / "a").resolve())
    assert "asks the main model for a brief" in checked["other"]["what"], checked
    assert len(_notes(hand, BRIEF)) == 1                                       # the main model is asked once
    assert [e for e in b.events.list() if e["type"] == "brief_requested"] == []


def test_a_copy_that_runs_for_weeks_keeps_its_copy_note_fresh(make_ctx, hand):
    clock = FakeClock(time.time())
    ctx = make_ctx(clock=clock, sleep={"brief_check_misses": 1})
    copies.announce(ctx)
    [first] = _notes(hand, COPY)
    clock.set(clock.now() + 4 * 86400)                    # past half its week
    executor.check(ctx)                                   # bedtime: a tick with work reads near-term
    [renewed] = _notes(hand, COPY)
    assert renewed["id"] != first["id"] and renewed["metadata"]["until"] > first["metadata"]["until"]
    executor.check(ctx)
    assert [n["id"] for n in _notes(hand, COPY)] == [renewed["id"]]          # once, not at every tick
