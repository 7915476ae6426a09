"""A service started while a draft waits for review (a restart, an upgrade): until its first check (in external
mode, the first nudge) it knows Memory only from the queue watch's read, and must not say the chain's brief waits
to be slept on."""
from __future__ import annotations

import requests

from hippocampus.cycle import executor
from tests.harness.reviewer import wait_for
from tests.service.test_tend import seed


def _slept(make_config, make_ctx, hand) -> tuple:
    """(the config, the draft id) of the last run's sleep; external mode: no check until a nudge."""
    cfg = make_config()
    seed(hand)
    return cfg, executor.check(make_ctx(cfg)).to_dict()["sleep"]["draft_id"]


def _first_status(svc) -> dict:
    """/status as the queue watch's first read of Memory leaves it, before any check (the test shows that)."""
    def read() -> dict:
        s = requests.get(svc.url + "/status", timeout=5).json()
        return s if (s.get("review") or {}).get("checked_at") else None
    s = wait_for(read, timeout=10, what="the queue watch's first read of Memory")
    assert s["chain"] is None, s["chain"]
    return s


def test_a_restart_with_a_draft_under_review_says_the_draft_waits_not_the_brief(make_config, make_ctx,
                                                                                 start_service, hand):
    cfg, draft_id = _slept(make_config, make_ctx, hand)
    assert [d["id"] for d in hand.drafts("pending")] == [draft_id] and len(hand.open_briefs()) == 1
    s = _first_status(start_service(cfg))
    headline = s["say"]["headline"]
    assert "brief" not in headline and "review" in headline, headline
    assert "slept on" not in s["say"]["cards"]["brief"]["sub"], s["say"]["cards"]["brief"]


def test_a_restart_with_a_chain_waiting_for_a_redraft_says_the_denials_wait_not_the_brief(make_config, make_ctx,
                                                                                          start_service, hand):
    """Every draft of the chain reviewed, denials left, no attempt pending: the queue holds no draft, the chain's
    brief is open, and no check sleeps on it; what waits is the redraft."""
    cfg, draft_id = _slept(make_config, make_ctx, hand)
    ops = hand.drafts("pending")[0]["operations"]
    hand.review(draft_id, [{"op": op["index"], "verdict": "deny", "critique": "not this"} for op in ops])
    assert hand.drafts("pending") == [] and len(hand.open_briefs()) == 1
    s = _first_status(start_service(cfg))
    headline = s["say"]["headline"]
    assert "brief" not in headline and "denied operations wait for a redraft" in headline, headline
    assert "slept on" not in s["say"]["cards"]["brief"]["sub"], s["say"]["cards"]["brief"]


def test_a_restart_with_a_landed_chain_does_not_say_its_brief_waits_to_be_slept_on(make_config, make_ctx,
                                                                                   start_service, hand):
    """Every operation approved while the service was down: the next nudge closes the chain and consumes its brief
    (no check sleeps on a chain's brief), so that brief does not wait to be slept on."""
    cfg, draft_id = _slept(make_config, make_ctx, hand)
    hand.approve_all(draft_id)
    assert hand.drafts("pending") == [] and len(hand.open_briefs()) == 1
    s = _first_status(start_service(cfg))
    headline = s["say"]["headline"]
    assert "slept on" not in headline and "nudge" in headline, headline
    assert "slept on" not in s["say"]["cards"]["brief"]["sub"], s["say"]["cards"]["brief"]


def test_a_brief_written_without_a_nudge_is_said_to_wait_not_to_be_wanted(make_config, start_service, hand):
    """External mode: the sleep by hand asked for a brief; the main model wrote it and did not nudge. The queue
    watch reads it in Memory, but the headline kept saying the service waits for a brief."""
    svc = start_service(make_config())                    # external mode: no check until a nudge
    hand.short("we drank green tea in the afternoon", topic="tea")
    asked = requests.post(svc.url + "/sleep", timeout=30).json()
    assert asked.get("asked_for_brief") is True, asked
    brief = hand.brief("tea and the garden mattered this week")

    def read() -> dict:
        s = requests.get(svc.url + "/status", timeout=5).json()
        return s if brief in ((s.get("review") or {}).get("briefs") or []) else None
    s = wait_for(read, timeout=10, what="the queue watch's read of the brief")
    headline = s["say"]["headline"]
    assert "Waiting for a brief" not in headline and "brief from the main model is waiting" in headline, headline
    assert "nudge" in headline, headline
