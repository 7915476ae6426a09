"""A sleep whose claim on its brief is lost mid-sleep (another copy took it over, or its note vanished from
Memory) posts nothing, and its report and the status say so in plain words: which copy, or that the note is
gone; never "interrupted by a stop", never "pid ?"."""
from __future__ import annotations

import os
import time

from hippocampus.cycle import claims, copies, executor
from hippocampus.status.lists import run_words, sleep_words
from tests.harness.clock import FakeClock
from tests.service.test_tend import scripted_model, seed


def _running(make_ctx, clock, fake_model, tmp_path) -> tuple:
    """Two running copies: each has told the Memory it runs, as the service does at its start."""
    ctxs = tuple(make_ctx(clock=clock, model={"url": fake_model.url},
                          sleep={"state_path": str(tmp_path / name / "state.json")}) for name in ("a", "b"))
    for ctx in ctxs:
        copies.announce(ctx)
    return ctxs


def _claim_notes(hand, brief_id: str) -> list:
    return [n for n in hand.near() if (n.get("metadata") or {}).get("claim") == f"brief:{brief_id}"]


def _sleep_losing_its_claim(make_ctx, hand, fake_model, tmp_path, take_over: bool) -> dict:
    clock = FakeClock(time.time())
    a, b = _running(make_ctx, clock, fake_model, tmp_path)
    brief = seed(hand)

    def mid_sleep(body: dict) -> dict:          # while a's model writes, its claim note goes
        for note in _claim_notes(hand, brief):
            b.memory.delete_near(note["id"])
        if take_over:
            clock.set(clock.now() + 1)
            claims.claim(b, f"brief:{brief}", f"sleeps on brief {brief}")
        return scripted_model(body)
    fake_model.responder = mid_sleep
    report = executor.check(a).to_dict()["sleep"]
    assert report["interrupted"] and not report["error"] and report["draft_id"] is None, report
    assert hand.drafts("pending") == []                                   # a posted nothing
    assert "interrupted by a stop" not in sleep_words(report) and "pid ?" not in sleep_words(report)
    assert run_words(a.state.get("history")[-1]).startswith(sleep_words(report))   # the history row too
    return report


def test_a_sleep_whose_brief_another_copy_took_over_names_that_copy(make_ctx, hand, fake_model, tmp_path):
    report = _sleep_losing_its_claim(make_ctx, hand, fake_model, tmp_path, take_over=True)
    assert sleep_words(report).startswith(f"another copy of seren-hippocampus (pid {os.getpid()} on "), report
    assert f"state folder {(tmp_path / 'b').resolve()}) sleeps on brief" in sleep_words(report)
    assert sleep_words(report).endswith("so this copy stopped and posted nothing")


def test_a_sleep_whose_claim_note_vanished_says_so(make_ctx, hand, fake_model, tmp_path):
    report = _sleep_losing_its_claim(make_ctx, hand, fake_model, tmp_path, take_over=False)
    assert sleep_words(report) == ("another copy of seren-hippocampus may have taken this over (this copy's claim "
                                   "note is gone from Memory), so this copy stopped and posted nothing"), report


def test_a_copy_that_meets_a_brief_another_copy_has_drafted_names_that_copy(make_ctx, hand, fake_model,
                                                                            tmp_path):
    """b read its snapshot while the brief was open; a slept on it and let go of its claim before b's turn:
    b drafts nothing and names a, from the stamp on a's draft."""
    from hippocampus.cycle.decide import Asked
    from hippocampus.status.narrator import headline
    clock = FakeClock(time.time())
    a, b = _running(make_ctx, clock, fake_model, tmp_path)
    fake_model.responder = scripted_model
    brief = seed(hand)
    late = executor.plan(b, Asked(tend=False))
    assert executor.check(a).to_dict()["sleep"]["draft_id"]
    calls = len(fake_model.requests)
    checked = executor.check_steps(b, *late).to_dict()
    assert checked["status"] == "other_copy" and checked["brief_id"] == brief, checked
    assert len(fake_model.requests) == calls and len(hand.drafts("pending")) == 1     # b spent nothing
    assert claims.sentence(checked["other"]) == (f"another copy of seren-hippocampus (pid {os.getpid()} on "
                                                 f"{checked['other']['host']}, state folder "
                                                 f"{(tmp_path / 'a').resolve()}) has drafted brief {brief} already")
    said, _, _ = headline({"memory": {"reachable": True}, "last_check": checked}, clock.now())
    assert said.startswith(f"Another copy of seren-hippocampus (pid {os.getpid()} on "), said


def test_a_draft_whose_copy_stamp_is_malformed_names_no_copy_on_status(make_ctx, hand, fake_model, tmp_path,
                                                                       caplog):
    """A draft under the brief's first draft id whose copy_* values are no stamp a copy writes (a pid that is words
    with control characters, a host of thousands of characters): they went unchecked into the check's report and
    /status's headline. Now the draft is named in the log as malformed and /status names no copy from it; the
    brief is still left alone (Memory keeps the first draft posted under that id)."""
    import logging

    from hippocampus.cycle.decide import Asked
    from hippocampus.cycle.drafter import step_draft_id
    from hippocampus.status.narrator import headline
    clock = FakeClock(time.time())
    a, b = _running(make_ctx, clock, fake_model, tmp_path)
    brief = seed(hand)
    late = executor.plan(b, Asked(tend=False))
    sid = hand.shorts()[0]["id"]
    a.memory.submit_draft({"id": step_draft_id(brief, 1), "summary": "by hand", "brief_id_used": brief,
                           "attempt": 1, "operations": [{"kind": "age_out", "source_short_ids": [sid]}],
                           "extra": {"copy_pid": "12\x1b[2Jgone", "copy_host": "h" * 5000,
                                     "copy_folder": "/x\nERROR forged"}})
    with caplog.at_level(logging.WARNING, logger="hippocampus"):
        checked = executor.check_steps(b, *late).to_dict()
    assert checked["status"] == "other_copy" and checked["brief_id"] == brief, checked
    said, _, _ = headline({"memory": {"reachable": True}, "last_check": checked}, clock.now())
    assert "\x1b" not in said and "hhhhhhhhhh" not in said and "forged" not in said, said
    assert "pid" not in said and f"has drafted brief {brief} already" in said, said
    assert any(step_draft_id(brief, 1) in r.getMessage() and "pid '12" in r.getMessage() for r in caplog.records)
    assert len(fake_model.requests) == 0
