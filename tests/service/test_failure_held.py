"""A model whose start failed is held off for model.lifecycle.retry_after_seconds: the failure is recorded
once, with when the next attempt is, and the ticks while it waits add nothing (issue 31, item 5)."""
from __future__ import annotations

import shlex
import sys
import time

import requests

from tests.harness.ports import free_port
from tests.harness.receiver import Receiver
from tests.harness.reviewer import wait_for


def test_a_held_failure_over_twenty_ticks_is_one_event_and_one_webhook_post(make_config, start_service, hand):
    for i in range(2):
        hand.short(f"we drank green tea in the afternoon, day {i}", topic="tea")
    brief = hand.brief("tea")
    hook = Receiver()
    try:
        dies = f"{shlex.quote(sys.executable)} -c {shlex.quote('raise SystemExit(3)')}"   # a server that will not start
        cfg = make_config(model={"url": f"http://127.0.0.1:{free_port()}/v1",
                                 "lifecycle": {"manage": True, "start": dies, "ready_timeout_seconds": 2,
                                               "poll_seconds": 0.05, "retry_after_seconds": 600,
                                               "stop_grace_seconds": 1}},
                          sleep={"mode": "thread", "tick_seconds": 0.1, "tend_interval_seconds": 0.1},
                          supervisor={"check_seconds": 0.05},
                          notify={"webhook_url": hook.url, "events": ["sleep_failed"]})
        svc = start_service(cfg)
        base = svc.url
        ticks = lambda: requests.get(base + "/status", timeout=10).json()["ticks"]  # noqa: E731
        wait_for(lambda: requests.get(base + "/events", params={"type": "sleep_failed"}, timeout=5).json()["entries"],
                 timeout=30, what="the first failed sleep")
        first = ticks()
        wait_for(lambda: ticks() >= first + 20, timeout=60, what="twenty more ticks")
        failed = requests.get(base + "/events", params={"type": "sleep_failed"}, timeout=5).json()["entries"]
        assert len(failed) == 1, failed
        assert failed[0]["next_attempt_at"] > time.time() + 500          # it says when the next attempt is
        wait_for(lambda: len(hook.requests) >= 1, timeout=10, what="the webhook post")
        assert [r["body"].get("type") or r["body"].get("event") for r in hook.requests] == ["sleep_failed"]
        st = requests.get(base + "/status", timeout=10).json()
        assert st["last_check"]["status"] == "waiting_for_model", st["last_check"]
        assert st["last_check"]["retry_at"] == failed[0]["next_attempt_at"]
        assert "the model's start is tried again at" in st["say"]["headline"], st["say"]["headline"]
        history = [r for r in requests.get(base + "/history", timeout=10).json()["entries"] if r["kind"] == "sleep"]
        assert len(history) == 1, history                                 # one failed sleep, not one a tick
        assert [b["id"] for b in hand.open_briefs()] == [brief]             # kept for the attempt after the hold
    finally:
        hook.close()
