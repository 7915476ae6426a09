"""POST /sleep, /check and /tend go the tick's one way (the executor): each answers with the report the state
file keeps, the same shape a tick persists, and a sleep by hand is refused while its chain is open."""
from __future__ import annotations

import requests

from hippocampus.cycle.reports import CheckReport, SleepReport, TendReport
from tests.harness.reviewer import wait_for
from tests.service.test_tend import seed


def post(base: str, path: str) -> dict:
    r = requests.post(base + path, timeout=60)
    assert r.status_code == 200, r.text
    return {k: v for k, v in r.json().items() if k != "say"}


def test_hand_started_sleep_check_and_tend_answer_with_the_report_they_persist(make_config, start_service, hand):
    brief = seed(hand)
    svc = start_service(make_config())
    state = svc.runtime.ctx.state

    slept = post(svc.url, "/sleep")
    assert set(slept) == set(SleepReport().to_dict()) and slept["brief_id"] == brief and slept["draft_id"]
    assert slept == state.get("last_sleep")

    checked = post(svc.url, "/check")
    assert set(checked) == set(CheckReport().to_dict()) and checked["status"] == "chain_open"
    assert {k: v for k, v in checked.items() if k != "sleep"} == state.get("last_check")

    hand.approve_all(slept["draft_id"])
    tended = post(svc.url, "/tend")
    assert set(tended) == set(TendReport().to_dict()) and tended["closed"] == [slept["draft_id"]]
    assert tended == state.get("last_tend")
    assert (svc.runtime.ctx.last_snapshot.summary()["chains"], hand.open_briefs()) == (0, [])   # read again

    seed(hand)
    post(svc.url, "/sleep")
    refused = post(svc.url, "/sleep")
    assert refused["refused"] is True and refused["status"] == "chain_open" and refused["operations"] == 0
    assert "one cycle at a time" in refused["message"]


def test_a_tick_persists_the_same_shapes(make_config, start_service, hand):
    seed(hand)
    svc = start_service(make_config())
    requests.post(svc.url + "/nudge", timeout=5)
    wait_for(lambda: svc.runtime.ctx.state.get("last_sleep"), what="the nudged tick's sleep")
    wait_for(lambda: svc.runtime.ctx.state.get("last_check"), what="the nudged tick's check")
    assert set(svc.runtime.ctx.state.get("last_sleep")) == set(SleepReport().to_dict())
    assert set(svc.runtime.ctx.state.get("last_check")) == set(CheckReport().to_dict()) - {"sleep"}
