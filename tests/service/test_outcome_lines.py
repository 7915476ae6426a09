"""What a person reads in the log after a sleep, a redraft and a chain's end: one line each, in words (issue 41,
item 4); and a sleep by hand with Memory gone down since the last look: 503 naming Memory, MCP isError, no word
of a brief that was not there, nothing recorded."""
from __future__ import annotations

import logging
from urllib.parse import urlparse

import pytest
import requests

from tests.harness.memory_server import free_port
from tests.harness.relay import Relay
from tests.harness.reviewer import wait_for
from tests.service.test_mcp import call_tools
from tests.service.test_tend import deny_garden, pending_draft, scripted_model, seed

BEARER = "outcome-test-bearer"
AUTH = {"Authorization": f"Bearer {BEARER}"}


def said(caplog, start: str) -> list:
    return [(r.levelname, r.getMessage()) for r in caplog.records
            if r.name.startswith("hippocampus") and r.getMessage().startswith(start)]


def test_a_sleep_that_drafted_a_redraft_and_a_chain_that_landed_each_say_so(make_config, start_service, hand,
                                                                             fake_model, caplog):
    fake_model.responder = scripted_model
    svc = start_service(make_config(model={"url": fake_model.url}, sleep={"max_attempts": 3}))
    brief = seed(hand)                                   # tea and garden, two fragments each, and a brief
    with caplog.at_level(logging.INFO):
        r = requests.post(svc.url + "/check", timeout=60)
        assert r.status_code == 200, r.text
        first = r.json()["sleep"]["draft_id"]
        assert said(caplog, "slept on") == [(
            "INFO", f"slept on brief {brief}: drafted 2 operations (2 new memories) on 2 topics for review "
                    f"(draft {first}); the main model reviews it in Memory (the first sleep in a while, so old "
                    "fragments are kept)")]

        deny_garden(hand, pending_draft(hand, 1), "The rose garden bloomed early")
        assert requests.post(svc.url + "/tend", timeout=60).status_code == 200
        second = pending_draft(hand, 2)
        assert said(caplog, "redrafted") == [(
            "INFO", f"redrafted 1 denied operation (attempt 2 of 3): draft {second['id']} of chain {first} "
                    "waits for review")]

        hand.approve_all(second["id"])
        assert requests.post(svc.url + "/tend", timeout=60).json()["closed"] == [first]
        assert said(caplog, "chain closed") == [(
            "INFO", f"chain closed: 2 landed, 0 denied, after 2 attempts (chain {first}, last draft {second['id']})")]


def test_a_quiet_sleep_says_there_was_nothing_new(make_config, start_service, hand, caplog):
    hand.brief("a quiet day")
    svc = start_service(make_config())
    with caplog.at_level(logging.INFO):
        r = requests.post(svc.url + "/check", timeout=30)
        assert r.status_code == 200 and r.json()["sleep"]["quiet"] is True, r.text
    assert said(caplog, "quiet sleep") == [("INFO", "quiet sleep: nothing new to draft")]


def test_a_failed_sleep_says_why_and_that_its_brief_is_kept(make_config, start_service, hand, caplog):
    dead = f"http://127.0.0.1:{free_port()}/v1"
    seed(hand)
    brief = hand.open_briefs()[0]["id"]
    svc = start_service(make_config(model={"url": dead, "timeout_seconds": 2}))
    with caplog.at_level(logging.INFO):
        r = requests.post(svc.url + "/check", timeout=60)
        assert r.status_code == 200 and r.json()["sleep"]["error"], r.text
    [(level, line)] = said(caplog, "the sleep failed")
    assert level == "ERROR"
    assert line.startswith(f"the sleep failed: the model at {dead} is not answering"), line
    assert line.endswith(f"; its brief {brief} is kept for the next sleep"), line
    assert [b["id"] for b in hand.open_briefs()] == [brief]


def test_a_sleep_by_hand_with_memory_gone_down_is_503_and_an_mcp_error(make_config, start_service, memory, hand,
                                                                     caplog):
    target = urlparse(memory.url)
    relay = Relay(free_port(), (target.hostname, target.port)).open()
    url = f"http://127.0.0.1:{relay.port}"
    try:
        svc = start_service(make_config(memory={"url": url, "timeout_seconds": 2},
                                        server={"bearer_token": BEARER}))
        wait_for(lambda: requests.get(svc.url + "/health", timeout=5).json()["memory_reachable"] is True,
                 timeout=15, what="the watch to see Memory up")
        relay.close()                                    # Memory goes away; the watch has not looked again yet
        with caplog.at_level(logging.INFO):
            r = requests.post(svc.url + "/sleep", params={"without_brief": "true"}, headers=AUTH, timeout=30)
        detail = r.json()["detail"]
        assert r.status_code == 503, r.text
        assert detail.startswith(f"SerenMemory at {url} is not answering ("), detail
        assert "; nothing was started" in detail and "brief" not in detail, detail
        out = call_tools(svc.url + "/mcp", [("sleep_now", {"without_brief": True}), ("sleep_now", {})],
                         bearer=BEARER)
        for i in (0, 1):
            assert out[i]["is_error"] is True, out[i]
            assert f"SerenMemory at {url} is not answering (" in out[i]["text"], out[i]
            assert "nothing was started" in out[i]["text"] and "brief" not in out[i]["text"], out[i]
        assert requests.get(svc.url + "/history", headers=AUTH, timeout=5).json()["entries"] == []
        events = requests.get(svc.url + "/events", headers=AUTH, timeout=5).json()["entries"]
        assert not [e for e in events if e["type"] in ("sleep_failed", "sleep_done")]
        assert not said(caplog, "the sleep failed")
    finally:
        relay.close()


@pytest.mark.parametrize("brief_id, words", [("b1", "(its brief is kept for the next check)"), (None, "")])
def test_a_failed_sleep_names_a_kept_brief_only_when_there_was_one(brief_id, words):
    from hippocampus.status.lists import sleep_words
    assert sleep_words({"error": "the model could not draft", "brief_id": brief_id}) == \
        ("failed: the model could not draft " + words).rstrip()
