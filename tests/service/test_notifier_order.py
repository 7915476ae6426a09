"""A webhook receiver sees the events in the order they happened, across a restart of the notifier: the events
the last instance was still to carry come before the ones told to the next (a forced restart that gave up waiting
on a busy instance, or a crash with events told while it died)."""
from __future__ import annotations

import logging
import threading

import requests

from actors import notifier, ripple, supervisor
from tests.harness.receiver import Receiver
from tests.harness.reviewer import wait_for

FAST = {"backoff_seconds": 0.05, "check_seconds": 0.05}


def notifier_row(base: str) -> dict:
    return requests.get(base + "/actors", timeout=5).json()["actors"]["notifier"]


def posted(hook: Receiver) -> list:
    return [r["body"]["draft_id"] for r in hook.at("/hook")]


def test_a_forced_restart_of_a_busy_notifier_keeps_the_webhooks_in_order(make_config, start_service, monkeypatch):
    monkeypatch.setattr(supervisor, "STOP_WAIT_SECONDS", 0.2)     # the restart gives up on the busy one at once
    hook = Receiver()
    hook.delay = 3.0            # a slow receiver: the first post is answered after 3 s
    try:
        svc = start_service(make_config(supervisor=FAST, notify={"webhook_url": hook.url,
                                                                 "events": ["draft_submitted"]}))
        emit = lambda d: svc.runtime.ctx.emit("draft_submitted", draft_id=d, operations=1)   # noqa: E731
        emit("a")
        wait_for(lambda: posted(hook) == ["a"], timeout=10, what="the first post, held by the receiver")
        hook.delay = 0.0        # the rest are answered at once
        emit("b")
        emit("c")               # b and c wait behind a in the busy notifier's mailbox
        r = requests.post(svc.url + "/actors/notifier/restart", params={"force": "true"}, timeout=5)
        assert r.status_code == 202, r.text
        wait_for(lambda: notifier_row(svc.url)["restarts"] == 1 and notifier_row(svc.url)["state"] == "running",
                 timeout=10, what="the new notifier")
        emit("d")
        wait_for(lambda: len(posted(hook)) == 4, timeout=20, what="all four posts")
        assert posted(hook) == ["a", "b", "c", "d"]
    finally:
        hook.close()


def test_an_event_told_while_the_notifier_dies_comes_after_the_ones_it_left_unread(make_config, start_service,
                                                                                    crashes):
    [cls] = [c for c in crashes.children if c.name == "notifier"]
    told_while_dying = threading.Event()

    class DiesSlowly(cls):
        def on_failure(self, *exc):
            if not told_while_dying.is_set():       # an event emitted while this instance lets go of its mailbox
                told_while_dying.set()
                self.rt.ctx.emit("draft_submitted", draft_id="late", operations=1)
            super().on_failure(*exc)

    children = [DiesSlowly if c is cls else c for c in crashes.children]
    hook = Receiver()
    hook.delay = 3.0
    try:
        svc = start_service(make_config(supervisor=FAST, notify={"webhook_url": hook.url,
                                                                 "events": ["draft_submitted"]}),
                            children=children)
        emit = lambda d: svc.runtime.ctx.emit("draft_submitted", draft_id=d, operations=1)   # noqa: E731
        emit("a")
        wait_for(lambda: posted(hook) == ["a"], timeout=10, what="the first post, held by the receiver")
        hook.delay = 0.0
        assert crashes.crash(svc.runtime, "notifier") is True      # read after a, before b and c
        emit("b")
        emit("c")
        wait_for(lambda: len(posted(hook)) == 4, timeout=20, what="all four posts")
        assert notifier_row(svc.url)["restarts"] == 1
        assert posted(hook) == ["a", "b", "c", "late"]
    finally:
        hook.close()


def test_a_forced_restart_of_a_busy_ripple_actor_keeps_the_wake_ups_in_order(make_config, start_service,
                                                                             monkeypatch):
    monkeypatch.setattr(supervisor, "STOP_WAIT_SECONDS", 0.2)
    receiver = Receiver()
    receiver.delay = 3.0        # the endpoint answers the first wake-up after 3 s
    try:
        svc = start_service(make_config(supervisor=FAST, ripple={"type": "endpoint", "url": receiver.url,
                                                                 "events": ["draft_submitted"]}))
        emit = lambda d: svc.runtime.ctx.emit("draft_submitted", draft_id=d, operations=1)   # noqa: E731
        emit("a")
        wait_for(lambda: posted(receiver) == ["a"], timeout=10, what="the first wake-up, held by the endpoint")
        receiver.delay = 0.0
        emit("b")
        emit("c")
        r = requests.post(svc.url + "/actors/ripple/restart", params={"force": "true"}, timeout=5)
        assert r.status_code == 202, r.text
        row = lambda: requests.get(svc.url + "/actors", timeout=5).json()["actors"]["ripple"]   # noqa: E731
        wait_for(lambda: row()["restarts"] == 1 and row()["state"] == "running", timeout=10, what="the new one")
        emit("d")
        wait_for(lambda: len(posted(receiver)) == 4, timeout=20, what="all four wake-ups")
        assert posted(receiver) == ["a", "b", "c", "d"]
    finally:
        receiver.close()


def _left_down(make_config, start_service, crashes, actor: str, **sections):
    """A service (`sections` of config) whose `actor` crashed and is left down (no restarts)."""
    svc = start_service(make_config(supervisor={**FAST, "max_restarts": 0}, **sections), children=crashes.children)
    assert crashes.crash(svc.runtime, actor) is True
    row = lambda: requests.get(svc.url + "/actors", timeout=5).json()["actors"][actor]   # noqa: E731
    wait_for(lambda: row()["state"] == "failed", timeout=10, what=f"the {actor} left down")
    return svc


def test_an_event_still_waiting_for_a_notifier_that_is_down_when_the_service_stops_says_so(make_config,
                                                                                          start_service, crashes):
    hook = Receiver()
    try:
        svc = _left_down(make_config, start_service, crashes, "notifier",
                         notify={"webhook_url": hook.url, "events": ["draft_submitted"]})
        ev = svc.runtime.ctx.emit("draft_submitted", draft_id="never", operations=1)
        svc.request_stop(drain_seconds=5)
        assert svc.wait_stopped(30)
        [said] = [e for e in svc.runtime.ctx.events.list(type_="draft_submitted") if e["seq"] == ev["seq"]]
        assert said.get("delivery") == {"delivered": False, "error": "not sent: the service was stopping"}, said
        assert hook.at("/hook") == []
    finally:
        hook.close()


def test_an_event_dropped_past_the_cap_for_a_notifier_that_is_down_says_so_and_the_log_says_it_once(
        make_config, start_service, crashes, monkeypatch, caplog):
    monkeypatch.setattr(notifier, "WAITING_MAX", 2)      # past two kept events, the oldest goes
    monkeypatch.setattr(ripple, "MISSED_MAX", 2)
    hook = Receiver()
    try:
        svc = _left_down(make_config, start_service, crashes, "notifier",
                         notify={"webhook_url": hook.url, "events": ["draft_submitted"]})
        caplog.set_level(logging.WARNING)
        seqs = [svc.runtime.ctx.emit("draft_submitted", draft_id=d, operations=1)["seq"] for d in "abcd"]
        said = {e["seq"]: e for e in svc.runtime.ctx.events.list(type_="draft_submitted")}
        for seq in seqs[:2]:        # the two oldest were dropped: their records say so, before any stop
            assert said[seq].get("delivery", {}).get("delivered") is False, said[seq]
            assert "dropped" in said[seq]["delivery"]["error"], said[seq]
        for seq in seqs[2:]:        # the two kept wait for the next notifier
            assert "delivery" not in said[seq], said[seq]
        lines = [r.getMessage() for r in caplog.records if "dropped" in r.getMessage()]
        assert len(lines) == 1 and "notifier" in lines[0], lines
    finally:
        hook.close()


def test_a_wake_up_dropped_past_the_cap_for_a_ripple_actor_that_is_down_says_so(make_config, start_service,
                                                                                  crashes, monkeypatch, caplog):
    monkeypatch.setattr(ripple, "MISSED_MAX", 2)
    receiver = Receiver()
    try:
        svc = _left_down(make_config, start_service, crashes, "ripple",
                         ripple={"type": "endpoint", "url": receiver.url, "events": ["draft_submitted"]})
        caplog.set_level(logging.WARNING)
        seqs = [svc.runtime.ctx.emit("draft_submitted", draft_id=d, operations=1)["seq"] for d in "abcd"]
        wait_for(lambda: [e["seq"] for e in ripple.missed(svc.runtime.registry)] == seqs[2:], timeout=10,
                 what="the two newest kept for the ripple")
        said = {e["seq"]: e for e in svc.runtime.ctx.events.list(type_="draft_submitted")}
        for seq in seqs[:2]:
            assert "while it was down" in (said[seq].get("ripple") or {}).get("dropped", ""), said[seq]
        for seq in seqs[2:]:
            assert "dropped" not in (said[seq].get("ripple") or {}), said[seq]
        lines = [r.getMessage() for r in caplog.records if "dropped" in r.getMessage()]
        assert len(lines) == 1 and "ripple" in lines[0], lines
    finally:
        receiver.close()


def test_at_the_stop_each_wake_up_a_down_notifier_never_carried_says_the_service_stopped(
        make_config, start_service, crashes, monkeypatch, caplog):
    monkeypatch.setattr(ripple, "MISSED_MAX", 2)         # more waited for the notifier than the ripple keeps
    receiver = Receiver()
    try:
        svc = _left_down(make_config, start_service, crashes, "notifier",
                         ripple={"type": "endpoint", "url": receiver.url, "events": ["draft_submitted"]})
        caplog.set_level(logging.WARNING)
        seqs = [svc.runtime.ctx.emit("draft_submitted", draft_id=d, operations=1)["seq"] for d in "abcd"]
        svc.request_stop(drain_seconds=5)
        assert svc.wait_stopped(30)
        said = {e["seq"]: e for e in svc.runtime.ctx.events.list(type_="draft_submitted")}
        for seq in seqs:        # none was fired: the service stopped, whatever the ripple's cap
            assert (said[seq].get("ripple") or {}).get("dropped") == ripple.STOPPED, said[seq]
        assert [r.getMessage() for r in caplog.records if "dropped" in r.getMessage()] == []
        assert receiver.at("/hook") == []
    finally:
        receiver.close()
