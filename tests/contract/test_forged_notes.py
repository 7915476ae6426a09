"""Notes forged into the real SerenMemory's near-term API (issue 38, items 2-5): a "slept" note or a claim is
read as data. A sleep in 2093 moves no bedtime, 1e300 breaks no check, a claim until 2096, from an exited pid on
this host, until "never" or under any note id keeps no brief from its sleep, and a sleep by hand that meets an
honest claim says which copy holds the brief and until when."""
from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys
import time
import uuid

import pytest

from hippocampus.cycle import claims, executor, notes
from hippocampus.cycle.bedtime import bedtime
from hippocampus.memory import MemoryClient
from tests.harness.clock import FakeClock
from tests.service.test_tend import seed

YEAR = 365 * 86400.0


def dead_pid() -> int:
    """The pid of a process of this host that has exited."""
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def forge(url: str, topic: str, fields: dict, note_id: str = None) -> str:
    """A near-term note as any local program can post one: straight to Memory's API."""
    return MemoryClient(url).add_near("forged", topic=topic, expires_at=time.time() + 3600, trigger_type="event",
                                      trigger_value="forged", note_id=note_id, extra=fields)["id"]


def copy_fields(**over) -> dict:
    """The fields a copy of the service writes about itself, for a copy that is not the one under test."""
    return {"copy": uuid.uuid4().hex, "pid": os.getpid(), "host": socket.gethostname(), "folder": "/elsewhere",
            **over}


def forge_claim(url: str, key: str, gen: int = 0, note_id: str = None, **over) -> str:
    fields = copy_fields(**{"claim": key, "gen": gen, "what": f"sleeps on {key}", "until": time.time() + 600, **over})
    return forge(url, claims.CLAIM_TOPIC, fields, note_id or notes.note_id(key, gen))


def malformed_lines(caplog) -> list:
    return [r.getMessage() for r in caplog.records if "looks like seren-hippocampus's but" in r.getMessage()]


def test_a_forged_slept_note_in_2093_moves_no_bedtime(make_ctx, memory, hand, caplog):
    """Item 2: past bedtime with no brief, the copy asks the main model for one, as if the note were not there."""
    ctx = make_ctx(sleep={"brief_check_misses": 1})
    now = ctx.clock.now()
    forge(memory.url, claims.SLEPT_TOPIC, copy_fields(slept_at=now + 67 * YEAR))
    with caplog.at_level(logging.INFO):
        checked = [executor.check(ctx).to_dict() for _ in range(3)]
    assert [c["status"] for c in checked] == ["waiting_for_brief"] * 3, checked    # was not_bedtime, for 60 years
    assert bedtime(ctx.cfg.sleep, ctx.state, now) <= now
    assert [n for n in hand.near() if (n.get("metadata") or {}).get("topic") == "hippocampus, brief"]  # it asked
    [said] = malformed_lines(caplog)                                         # named once, not every check
    assert "its slept_at" in said and "is in the future" in said, said


@pytest.mark.parametrize("slept_at", [1e300, -5, "NaN", 10 ** 30])
def test_a_slept_note_that_is_no_time_breaks_no_check(make_ctx, memory, slept_at):
    """Item 3: with sleep.at, bedtime is a local HH:MM after the last sleep; 1e300 made every check an error."""
    ctx = make_ctx(sleep={"at": "03:00", "brief_check_misses": 1})
    ctx.state.set(first_check_at=ctx.clock.now() - 2 * 86400)             # its first 03:00 has passed
    forge(memory.url, claims.SLEPT_TOPIC, copy_fields(slept_at=slept_at))
    for _ in range(2):
        checked = executor.check(ctx).to_dict()
        assert checked["status"] == "waiting_for_brief" and checked["error"] is None, checked
    assert ctx.state.get("memory_slept_at") is None


@pytest.mark.parametrize("case", ["until_2096", "exited_pid", "until_never", "any_note_id", "squatter"])
def test_a_forged_claim_keeps_no_brief_from_its_sleep(make_ctx, memory, hand, case, caplog):
    """Item 4: each of these held the waiting brief from ever being slept (other_copy), or made the check an
    error; now the brief is slept at the next check, and the note is named once in the log."""
    ctx = make_ctx()
    brief = seed(hand)
    key = f"brief:{brief}"
    if case == "until_2096":
        forge_claim(memory.url, key, until=time.time() + 70 * YEAR, host="elsewhere")
    elif case == "exited_pid":
        forge_claim(memory.url, key, pid=dead_pid())
    elif case == "until_never":
        forge_claim(memory.url, key, until="never")
    elif case == "any_note_id":
        forge_claim(memory.url, key, gen=5, note_id=uuid.uuid4().hex, host="elsewhere")
    else:            # a note that is no claim, sitting where this copy's claim goes
        forge(memory.url, "anything", {"claim": key, "gen": "zero"}, notes.note_id(key, 0))
    with caplog.at_level(logging.INFO):
        checked = executor.check(ctx).to_dict()
    assert checked["status"] == "sleeping", checked
    assert checked["sleep"]["error"] is None and not checked["sleep"]["interrupted"], checked
    assert checked["sleep"]["draft_id"] and [d["brief_id_used"] for d in hand.drafts("pending")] == [brief]
    if case in ("until_2096", "until_never", "any_note_id", "squatter"):
        assert len(malformed_lines(caplog)) == 1, malformed_lines(caplog)


def test_an_honest_claim_from_a_live_copy_holds_until_its_lease_ends(make_ctx, memory, hand):
    """The rules take nothing from a claim as a copy writes it: another host's live claim holds, for its lease."""
    clock = FakeClock(time.time())
    ctx = make_ctx(clock=clock)
    brief = seed(hand)
    forge_claim(memory.url, f"brief:{brief}", host="elsewhere", until=time.time() + 600)
    held = executor.check(ctx).to_dict()
    assert held["status"] == "other_copy" and held["other"]["host"] == "elsewhere", held
    clock.advance(601)
    assert executor.check(ctx).to_dict()["status"] == "sleeping"


def test_a_sleep_by_hand_while_another_copy_holds_the_brief_says_who_and_until_when(make_ctx, hand, tmp_path):
    """Item 5: POST /sleep's domain call raised AttributeError ('NoneType' ... 'memory_changed'): a 500."""
    clock = FakeClock(time.time())
    a, b = (make_ctx(clock=clock, sleep={"state_path": str(tmp_path / name / "state.json")}) for name in "ab")
    brief = seed(hand)
    held = claims.claim(b, f"brief:{brief}", f"sleeps on brief {brief}")          # b is at work on it
    answer = executor.sleep_by_hand(a).to_dict()
    assert answer["status"] == "other_copy" and answer["refused"] is True, answer
    assert answer["message"] == (
        f"another copy of seren-hippocampus (pid {os.getpid()} on {socket.gethostname()}, state folder "
        f"{(tmp_path / 'b').resolve()}) sleeps on brief {brief} until "
        f"{time.strftime('%H:%M', time.localtime(held.note['until']))}, so this copy started nothing (two copies "
        "on one Memory take turns; stop one of them unless you meant to run both)"), answer
    assert hand.drafts("pending") == []                                        # a started nothing
