"""A sleep that needs the model while the lifecycle actor is left down (failed) says so, and what brings it back:
not "restarting; the next check tries again", which no check will do."""
from __future__ import annotations

import requests

from tests.harness.reviewer import wait_for
from tests.service.test_tend import scripted_model, seed

FAST = {"backoff_seconds": 0.05, "check_seconds": 0.05}


def lifecycle_row(base: str) -> dict:
    return requests.get(base + "/actors", timeout=5).json()["actors"]["lifecycle"]


def test_a_sleep_while_the_lifecycle_actor_is_failed_names_the_restart(make_config, start_service, crashes,
                                                                      fake_model, hand):
    fake_model.responder = scripted_model
    seed(hand)
    svc = start_service(make_config(supervisor={**FAST, "max_restarts": 0}, model={"url": fake_model.url}),
                        children=crashes.children)
    base = svc.url
    assert crashes.crash(svc.runtime, "lifecycle") is True
    wait_for(lambda: lifecycle_row(base)["state"] == "failed", timeout=10, what="the lifecycle actor left down")
    r = requests.post(base + "/sleep", timeout=60)
    assert r.status_code == 200, r.text
    error = r.json()["error"] or ""
    assert "/actors/lifecycle/restart" in error, error
    assert "the next check tries again" not in error, error
