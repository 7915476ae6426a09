"""A night's budget through the real service (issue 40): a model that runs every answer to the cap is stopped by
the breaker, and /status, the events and the next check say why, naming the setting; the brief and the fragments
stay in Memory."""
from __future__ import annotations

import requests

from tests.contract.test_budget_night import RUNAWAY, seed


def test_status_says_the_breaker_stopped_the_night_and_the_next_check_waits(make_config, start_service, hand,
                                                                           fake_model):
    fake_model.replies = [RUNAWAY]
    frags = seed(hand, topics=("tea", "garden", "bread", "chess"))
    brief = hand.brief("a week of small things", promote=["tea", "garden", "bread", "chess"])
    svc = start_service(make_config(model={"url": fake_model.url, "write": "free"},
                                    sleep={"budget": {"cut_in_a_row": 2}}))
    r = requests.post(svc.url + "/check", timeout=60)
    assert r.status_code == 200, r.text
    assert len(fake_model.requests) == 2                          # two cut answers, then the breaker
    st = requests.get(svc.url + "/status", timeout=10).json()
    spent = st["last_sleep"]["budget"]
    assert spent["setting"] == "sleep.budget.cut_in_a_row" and spent["calls"] == 2
    headline = st["say"]["headline"]
    assert "stopped drafting early" in headline and "2 answers in a row ran into the answer cap" in headline
    assert "raise the sleep cut in a row setting, now 2" in headline, headline      # the viewer's words for a key
    assert "sleep.budget.cut_in_a_row" in spent["reason"]                        # the details keep the key
    assert "Its brief and undrafted fragments are kept" in headline
    card = st["say"]["cards"]["last_sleep"]
    assert card["main"] == "Stopped early" and "the sleep cut in a row setting" in card["sub"], card
    events = requests.get(svc.url + "/events", params={"type": "sleep_budget_spent"}, timeout=10).json()["entries"]
    assert len(events) == 1 and events[0]["setting"] == "sleep.budget.cut_in_a_row" and events[0]["piles_left"] == 2
    assert brief in events[0]["words"]
    again = requests.post(svc.url + "/check", timeout=60).json()
    assert again["status"] == "budget_rest" and len(fake_model.requests) == 2
    assert [b["id"] for b in hand.open_briefs()] == [brief]
    left = {s["id"] for s in hand.shorts()}
    assert all(f in left for fs in frags.values() for f in fs)
    assert hand.drafts() == []
