"""A nudge that found the cycle held waits for the first beat that finds it free: a restart of the scheduler
meanwhile (a crash, or an operator's restart) must not lose it; in external mode no other tick comes."""
from __future__ import annotations

import requests

from tests.harness.reviewer import wait_for
from tests.service.test_tick import ticks

FAST = {"backoff_seconds": 0.05, "check_seconds": 0.05}


def scheduler_row(base: str) -> dict:
    return requests.get(base + "/actors", timeout=5).json()["actors"]["scheduler"]


def test_a_pending_nudge_survives_a_restart_of_the_scheduler(make_config, start_service):
    svc = start_service(make_config(supervisor=FAST, sleep={"nudge_wait_seconds": 0}))      # external mode
    base, ctx = svc.url, svc.runtime.ctx
    before = ticks(svc)
    held = ctx.cycle.enter("tend")          # the cycle held, as a tend by hand holds it
    try:
        assert requests.post(base + "/nudge", timeout=5).json()["woke"] is True
        wait_for(lambda: svc.runtime.scheduler.nudge_pending(), timeout=5, what="the nudge pending")
        r = requests.post(base + "/actors/scheduler/restart", params={"force": "true"}, timeout=5)
        assert r.status_code == 202, r.text
        wait_for(lambda: scheduler_row(base)["state"] == "running" and scheduler_row(base)["restarts"] == 1,
                 timeout=15, what="the scheduler running again")
        assert ticks(svc) == before, "a tick ran while the cycle was held; the test proves nothing"
    finally:
        ctx.cycle.leave(held)
    wait_for(lambda: ticks(svc) == before + 1, timeout=10, what="the nudged tick once the cycle was free")
    assert not svc.runtime.scheduler.nudge_pending()


def test_a_nudge_while_the_scheduler_is_down_is_noted_and_runs_when_it_is_back(make_config, start_service,
                                                                               crashes):
    svc = start_service(make_config(supervisor={**FAST, "max_restarts": 0}, sleep={"nudge_wait_seconds": 0}),
                        children=crashes.children)
    base = svc.url
    before = ticks(svc)
    assert crashes.crash(svc.runtime, "scheduler") is True
    wait_for(lambda: scheduler_row(base)["state"] == "failed", timeout=10, what="the scheduler left down")
    said = requests.post(base + "/nudge", timeout=5).json()
    assert said["woke"] is False and "noted" in said["message"], said
    [event] = requests.get(base + "/events", params={"type": "nudged"}, timeout=5).json()["entries"]
    facts = event["say"]["facts"]       # no turn was under way: the scheduler was down, its return takes it
    assert "under way" not in facts and "down" in facts, facts
    r = requests.post(base + "/actors/scheduler/restart", timeout=5)
    assert r.status_code == 202, r.text
    wait_for(lambda: scheduler_row(base)["state"] == "running", timeout=15, what="the scheduler running again")
    # "noted; the next tick carries on": in external mode that tick is the nudge's own, once the scheduler is back
    wait_for(lambda: ticks(svc) == before + 1, timeout=10, what="the noted nudge's tick")
