"""The whole service in-process against the real SerenMemory: a mechanical sleep that lands."""
from __future__ import annotations

import requests

from tests.harness.reviewer import wait_for


def test_mechanical_sleep_on_a_brief_lands_and_closes(make_config, start_service, hand):
    for i in range(3):
        hand.short(f"the fish dream number {i} had a very long tail", topic="fish, dreams")
    hand.short("a one-off about the weather", topic="weather")
    brief_id = hand.brief("we talked about the fish dream a lot")
    svc = start_service(make_config())
    base = svc.url
    r = requests.post(base + "/check", timeout=30)
    assert r.status_code == 200, r.text
    report = r.json()
    assert report["status"] == "sleeping", report
    draft_id = report["sleep"]["draft_id"]
    assert draft_id
    d = hand.draft(draft_id)
    assert [op["kind"] for op in d["operations"]] == ["new_core"]
    assert d["brief_id_used"] == brief_id
    notes = [n for n in hand.near() if (n["metadata"].get("topic") == "hippocampus, review")]
    assert len(notes) == 1
    hand.approve_all(draft_id)
    r = requests.post(base + "/nudge", timeout=5)
    assert r.json()["ok"] is True
    wait_for(lambda: any(e["type"] == "chain_closed" for e in requests.get(base + "/events").json()["entries"]),
             what="chain_closed")
    assert hand.open_briefs() == []
    assert [n for n in hand.near() if n["metadata"].get("topic") == "hippocampus, review"] == []
    assert any("fish dream" in e["content"] for e in hand.long())
    st = requests.get(base + "/status").json()
    assert st["mode"] == "external" and "explain" in st
    assert set(st["actors"]) == {"scheduler", "chain", "sleeper", "lifecycle", "ripple", "notifier", "quality",
                                 "replay", "memory_health", "model_health", "wakeup", "queue"}
