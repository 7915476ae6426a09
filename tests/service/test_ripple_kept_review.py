"""A review wake-up kept for retry (the last one for its kind still ran) wakes the main model only while its draft
is still pending: one whose draft was reviewed meanwhile is dropped, and the History says why."""
from __future__ import annotations

import getpass
import os

import pytest
import requests

from tests.harness.memory_client import ReviewingClient
from tests.harness.reviewer import wait_for
from tests.service.test_ripple_service import Recorder, event

pytestmark = pytest.mark.skipif(os.name == "nt", reason="POSIX accounts and process handling")


def a_pending_draft(memory_url: str, hand) -> str:
    sid = hand.short("we moved the piano to the hall", topic="piano")
    return ReviewingClient(memory_url).submit_draft(
        {"summary": "the piano", "attempt": 1, "terminal": False,
         "operations": [{"kind": "new_core", "content": "we moved the piano to the hall", "topic": "piano",
                         "source_short_ids": [sid], "evidence_count": 1, "rationale": "it came up"}]})["id"]


def test_a_kept_wake_up_for_a_draft_reviewed_meanwhile_is_dropped(make_config, start_service, tmp_path, hand,
                                                                   memory):
    rec = Recorder(tmp_path, delay=3.0)
    cfg = make_config(supervisor={"backoff_seconds": 0.05, "check_seconds": 0.05},
                      sleep={"mode": "thread", "tick_seconds": 0.2, "brief_request": False},
                      ripple={"type": "script", "command": rec.command(), "run_as": getpass.getuser(),
                              "events": ["draft_submitted"]})
    svc = start_service(cfg)
    base = svc.url
    draft = a_pending_draft(memory.url, hand)
    one = svc.runtime.ctx.emit("draft_submitted", draft_id="d-earlier", operations=1)
    first = wait_for(lambda: event(base, one["seq"]).get("ripple"), timeout=10, what="the first wake-up")
    assert first["ok"] is True, first
    two = svc.runtime.ctx.emit("draft_submitted", draft_id=draft, operations=1)
    skipped = wait_for(lambda: event(base, two["seq"]).get("ripple"), timeout=10, what="the second's outcome")
    assert skipped.get("skipped"), skipped
    hand.approve_all(draft)                 # the main model reviewed it (woken by the first, say) while it waited
    assert hand.draft(draft)["status"] != "pending"
    assert not (rec.out / f"{first['pid']}.json").exists(), "the first ended before the review; proves nothing"
    rec.release()                           # the first, still running after the review, may end now

    rec.run(first["pid"], timeout=15)
    after = wait_for(lambda: (lambda o: o if o.get("dropped") or o.get("retried") else None)(
        event(base, two["seq"])["ripple"]), timeout=20, what="the kept wake-up fired or dropped")
    assert not after.get("retried"), f"the main model was woken to review {draft}, reviewed already: {after}"
    assert "reviewed" in after["dropped"], after
    assert [r["argv"][2] for r in rec.runs()] == ["d-earlier"]
    assert (svc.runtime.board.get("ripple") or {}).get("waiting_to_retry") == []


def test_a_wake_up_kept_while_the_ripple_actor_was_down_is_dropped_once_its_draft_is_reviewed(
        make_config, start_service, crashes, tmp_path, hand, memory):
    rec = Recorder(tmp_path)
    cfg = make_config(supervisor={"backoff_seconds": 0.05, "check_seconds": 0.05, "max_restarts": 0},
                      ripple={"type": "script", "command": rec.command(), "run_as": getpass.getuser(),
                              "events": ["draft_submitted"]})
    svc = start_service(cfg, children=crashes.children)
    base = svc.url
    row = lambda: requests.get(base + "/actors", timeout=5).json()["actors"]["ripple"]     # noqa: E731
    assert crashes.crash(svc.runtime, "ripple") is True
    wait_for(lambda: row()["state"] == "failed", timeout=10, what="the ripple actor left down")
    draft = a_pending_draft(memory.url, hand)
    ev = svc.runtime.ctx.emit("draft_submitted", draft_id=draft, operations=1)    # kept for the next instance
    wait_for(lambda: ev["seq"] in [e["seq"] for e in svc.runtime.registry.estate("ripple").get("kept_tells", [])],
             timeout=10, what="the wake-up kept for the next ripple actor")
    hand.approve_all(draft)                 # reviewed (the main model pulled it) while the ripple actor was down
    r = requests.post(base + "/actors/ripple/restart", timeout=5)
    assert r.status_code == 202, r.text
    said = wait_for(lambda: event(base, ev["seq"]).get("ripple"), timeout=10, what="the kept wake-up's outcome")
    assert "reviewed" in said.get("dropped", ""), said
    assert rec.runs() == []


def test_a_wake_up_still_kept_for_a_ripple_actor_that_is_down_when_the_service_stops_says_so(
        make_config, start_service, crashes, tmp_path):
    rec = Recorder(tmp_path)
    cfg = make_config(supervisor={"backoff_seconds": 0.05, "check_seconds": 0.05, "max_restarts": 0},
                      ripple={"type": "script", "command": rec.command(), "run_as": getpass.getuser(),
                              "events": ["draft_submitted"]})
    svc = start_service(cfg, children=crashes.children)
    row = lambda: requests.get(svc.url + "/actors", timeout=5).json()["actors"]["ripple"]     # noqa: E731
    assert crashes.crash(svc.runtime, "ripple") is True
    wait_for(lambda: row()["state"] == "failed", timeout=10, what="the ripple actor left down")
    ev = svc.runtime.ctx.emit("draft_submitted", draft_id="d-never", operations=1)
    wait_for(lambda: ev["seq"] in [e["seq"] for e in svc.runtime.registry.estate("ripple").get("kept_tells", [])],
             timeout=10, what="the wake-up kept for the next ripple actor")
    svc.request_stop(drain_seconds=5)
    assert svc.wait_stopped(30)
    [said] = [e for e in svc.runtime.ctx.events.list(type_="draft_submitted") if e["seq"] == ev["seq"]]
    assert said.get("ripple", {}).get("dropped") == "the service stopped before it went out", said
    assert rec.runs() == []
