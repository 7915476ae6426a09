"""A service started while a draft waits for review (a restart, an upgrade): until its first check (in external
mode, the first nudge) it knows Memory only from the queue watch's read, and must not say the chain's brief waits
to be slept on."""
from __future__ import annotations

import requests

from hippocampus.cycle import executor
from tests.harness.reviewer import wait_for
from tests.service.test_tend import seed


def test_a_restart_with_a_draft_under_review_says_the_draft_waits_not_the_brief(make_config, make_ctx,
                                                                                 start_service, hand):
    cfg = make_config()                                   # external mode: no check until a nudge
    seed(hand)
    draft_id = executor.check(make_ctx(cfg)).to_dict()["sleep"]["draft_id"]    # the last run's sleep
    assert [d["id"] for d in hand.drafts("pending")] == [draft_id] and len(hand.open_briefs()) == 1
    svc = start_service(cfg)

    def read() -> dict:
        s = requests.get(svc.url + "/status", timeout=5).json()
        return s if (s.get("review") or {}).get("checked_at") else None
    s = wait_for(read, timeout=10, what="the queue watch's first read of Memory")
    assert s["chain"] is None, s["chain"]                 # no check yet: the test shows the first read
    headline = s["say"]["headline"]
    assert "brief" not in headline and "review" in headline, headline
    assert "slept on" not in s["say"]["cards"]["brief"]["sub"], s["say"]["cards"]["brief"]
