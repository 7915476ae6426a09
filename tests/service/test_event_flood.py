"""A nudge storm cannot wipe the history: 2,000 nudges are one `nudged` event, and the sleep stays."""
from __future__ import annotations

import requests

from tests.harness.reviewer import wait_for
from tests.service.test_durability import seed


def events(base: str, type_: str = None) -> list:
    params = {"limit": 1000, **({"type": type_} if type_ else {})}
    return requests.get(base + "/events", params=params, timeout=10).json()["entries"]


def test_2000_nudges_leave_the_sleep_and_its_draft_in_the_events(make_config, start_service, hand):
    seed(hand)
    svc = start_service(make_config())
    base = svc.url
    slept = requests.post(base + "/sleep", timeout=60).json()
    assert slept["draft_id"], slept
    before = {e["type"]: e["seq"] for e in events(base) if e["type"] in ("draft_submitted", "sleep_done")}
    assert set(before) == {"draft_submitted", "sleep_done"}

    with requests.Session() as s:
        for _ in range(2000):
            assert s.post(base + "/nudge", timeout=10).status_code == 200

    kept = events(base)
    assert {e["type"]: e["seq"] for e in kept if e["type"] in before} == before
    nudged = [e for e in kept if e["type"] == "nudged"]
    assert [e["count"] for e in nudged] == [2000], nudged      # one event for the burst, with its count
    assert nudged[0]["last_at"] >= nudged[0]["at"]
    # the ticks the storm caused are over, and the log still has both
    wait_for(lambda: not (svc.runtime.board.get("ticks") or {}).get("ticking"), timeout=30,
             what="the nudged ticks to end")
    assert {"draft_submitted", "sleep_done"} <= {e["type"] for e in events(base)}
