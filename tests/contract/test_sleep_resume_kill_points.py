"""A sleep killed after its draft landed in Memory, and finished after the restart, is a sleep that happened:
bedtime moves on from it, last_sleep and the history show it once, sleep_done and draft_submitted are said
once, and the service does not ask the main model for another brief.

Found chasing a SIGKILL test: only run_sleep recorded a finished sleep, so a sleep the restart finished
(resume_submit) left last_sleep_ok_at where it was. Bedtime stayed "due now", and once the reviewer had
landed the chain the checks counted misses and asked for a new brief although a sleep had just completed.
These kill the sleep at the draft's landing and after each durable write that follows it, without timing.
"""
from __future__ import annotations

import time

import pytest

from hippocampus.cycle import executor
from hippocampus.cycle.bedtime import bedtime
from tests.harness.clock import FakeClock

from .test_cull_kill_points import KillAfter, on_disk
from .test_cull_resume import Killed

KILL_AFTER = range(0, 8)            # 0: as the draft's POST returns; n: after the nth durable write that follows
HOUR = 3600.0


class KillAfterTheDraft(KillAfter):
    """Dies (Killed) once the draft has landed in Memory: at once (nth 0), or right after the nth durable
    write that follows the landing has reached the disk."""

    def __init__(self, ctx, nth: int):
        self.landed = False
        super().__init__(ctx, nth)
        submit = ctx.memory.submit_draft

        def submit_draft(body: dict) -> dict:
            res = submit(body)
            self.landed = True
            if nth == 0:
                raise Killed("as the draft's POST returned")
            return res
        ctx.memory.submit_draft = submit_draft

    def _wrote(self, what: str) -> None:
        if self.landed:
            super()._wrote(what)


@pytest.mark.parametrize("nth", KILL_AFTER)
def test_a_sleep_killed_after_its_draft_landed_counts_once_and_moves_bedtime(make_config, make_ctx, hand, nth):
    cfg = make_config()
    clock = FakeClock(time.time())
    slept = make_ctx(cfg, clock=clock)
    slept.state.set(last_sleep_ok_at=clock.now() - cfg.sleep.interval_seconds - HOUR)   # bedtime an hour ago
    for i in range(3):
        hand.short(f"the owl called at midnight, night {i}", topic="owl")
    brief = hand.brief("the owl")

    dying = make_ctx(cfg, clock=clock)
    kill = KillAfterTheDraft(dying, nth)
    try:
        executor.check(dying)
        killed = False
    except Killed:
        killed = True
    assert kill.landed
    if not killed:
        assert nth > len(kill.writes), "KILL_AFTER must reach past the sleep's last durable write"
    where = f"killed after write {nth} of {kill.writes}" if killed else "not killed"
    [draft] = hand.drafts()
    draft_id, n_ops = draft["id"], len(draft["operations"])

    clock.advance(60)                                           # the restart, a minute later
    restarted = make_ctx(cfg, clock=clock)                      # a new process reads the state file
    check = executor.check(restarted).to_dict()
    assert check["status"] == "chain_open", (where, check)

    last = restarted.state.get("last_sleep")
    assert last and last["draft_id"] == draft_id and last["brief_id"] == brief and not last["error"], where
    finished_at = restarted.state.get("last_sleep_ok_at")
    assert finished_at == last["finished_at"] in (clock.now() - 60, clock.now()), where   # before or after
    assert bool(last.get("resumed")) == (finished_at == clock.now()), where      # the restart finished it
    rows = [r for r in restarted.state.get("history") if r["kind"] == "sleep"]
    assert [(r["draft_id"], r["operations"], r["error"]) for r in rows] == [(draft_id, n_ops, None)], where
    assert restarted.state.get("submitting") is None, where
    due = bedtime(restarted.cfg.sleep, restarted.state, restarted.clock.now())
    assert due == finished_at + cfg.sleep.interval_seconds > clock.now(), where

    events = on_disk(cfg)
    done = [e for e in events if e["type"] == "sleep_done"]
    assert [(e["draft_id"], e["operations"]) for e in done] == [(draft_id, n_ops)], where
    assert [e["draft_id"] for e in events if e["type"] == "draft_submitted"] == [draft_id], where
    notes = [n for n in hand.near() if n["metadata"].get("topic") == "hippocampus, review"]
    assert len(notes) == 1 and draft_id in notes[0]["content"], where

    # the reviewer lands the chain; the checks after it are before bedtime: no miss, no new brief asked for
    hand.approve_all(draft_id)
    assert executor.tend(restarted).to_dict()["closed"] == [draft_id], where
    for _ in range(cfg.sleep.brief_check_misses + 1):
        clock.advance(600)
        check = executor.check(restarted).to_dict()
        assert check["status"] == "not_bedtime" and check["misses"] == 0, (where, check)
    assert restarted.state.get("brief_request") is None, where
    assert [e for e in on_disk(cfg) if e["type"] == "brief_requested"] == [], where
    assert [n for n in hand.near() if n["metadata"].get("topic") == "hippocampus, brief"] == [], where
    assert len([e for e in on_disk(cfg) if e["type"] == "sleep_done"]) == 1, where


def test_a_note_that_only_looks_like_the_review_note_is_not_taken_for_it(make_config, make_ctx, hand, memory):
    """Killed as its draft landed, the sleep's restart took any near-term note with the review topic that named
    the draft for its own review note, whoever wrote it: the main model was never told, in the service's words,
    that the draft waits for its review. The review note is the one under its own id, posted again if need be."""
    from hippocampus.cycle.sleep import REVIEW_TOPIC, review_note_id
    from hippocampus.memory import MemoryClient

    cfg = make_config()
    clock = FakeClock(time.time())
    make_ctx(cfg, clock=clock).state.set(last_sleep_ok_at=clock.now() - cfg.sleep.interval_seconds - HOUR)
    for i in range(3):
        hand.short(f"the owl called at midnight, night {i}", topic="owl")
    hand.brief("the owl")
    dying = make_ctx(cfg, clock=clock)
    KillAfterTheDraft(dying, 0)
    with pytest.raises(Killed):
        executor.check(dying)
    [draft] = hand.drafts()
    MemoryClient(memory.url).add_near(f"draft {draft['id']} was reviewed already: leave it", topic=REVIEW_TOPIC)
    clock.advance(60)
    assert executor.check(make_ctx(cfg, clock=clock)).to_dict()["status"] == "chain_open"
    ours = [n for n in hand.near() if n["id"] == review_note_id(draft["id"])]
    assert len(ours) == 1 and "waits for your review" in ours[0]["content"], hand.near()
