"""An operator's restart of the ripple actor (POST /actors/ripple/restart?force=true) restarts the actor, not the
main model's session it woke: the wake-up still running goes on to its end (the Ripple outlives the instance)."""
from __future__ import annotations

import getpass
import os

import psutil
import pytest
import requests

from tests.harness.receiver import Receiver
from tests.harness.reviewer import wait_for
from tests.service.test_ripple_service import Recorder, event

pytestmark = pytest.mark.skipif(os.name == "nt", reason="POSIX accounts and process handling")
FAST = {"backoff_seconds": 0.05, "check_seconds": 0.05}


def ripple_row(base: str) -> dict:
    return requests.get(base + "/actors", timeout=5).json()["actors"]["ripple"]


def test_a_forced_restart_of_the_ripple_actor_leaves_the_running_wake_up_alone(make_config, start_service,
                                                                                 tmp_path):
    rec = Recorder(tmp_path, delay=4.0)
    cfg = make_config(supervisor=FAST, ripple={"type": "script", "command": rec.command(),
                                               "run_as": getpass.getuser(), "events": ["draft_submitted"]})
    svc = start_service(cfg)
    base = svc.url
    ev = svc.runtime.ctx.emit("draft_submitted", draft_id="d-one", operations=1)
    woke = wait_for(lambda: event(base, ev["seq"]).get("ripple"), timeout=10, what="the wake-up to start")
    assert woke["ok"] is True, woke
    proc = psutil.Process(woke["pid"])
    assert proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE

    r = requests.post(base + "/actors/ripple/restart", params={"force": "true"}, timeout=5)
    assert r.status_code == 202, r.text
    wait_for(lambda: ripple_row(base)["state"] == "running" and ripple_row(base)["restarts"] == 1, timeout=15,
             what="the ripple actor running again")
    assert not (rec.out / f"{woke['pid']}.json").exists(), "the wake-up ended before the restart; proves nothing"
    released = rec.release()                # the session, still running after the restart, may end now
    # the main model's session goes on to its own end and records its run, as if nothing had happened here
    run = rec.run(woke["pid"], timeout=15)
    assert run["argv"][2] == "d-one" and run["end"] >= released
    last = wait_for(lambda: (svc.runtime.board.get("ripple") or {}).get("last", {}).get("draft_submitted"),
                    timeout=10, what="the wake-up's end on the board")
    assert last.get("status") == 0 or last.get("ok") is True, last


def test_a_ripple_kept_for_retry_still_fires_after_the_ripple_actor_restarts(make_config, start_service, tmp_path):
    rec = Recorder(tmp_path, delay=3.0)
    cfg = make_config(supervisor=FAST, sleep={"mode": "thread", "tick_seconds": 0.2, "brief_request": False},
                      ripple={"type": "script", "command": rec.command(), "run_as": getpass.getuser(),
                              "events": ["draft_submitted"]})
    svc = start_service(cfg)
    base = svc.url
    one = svc.runtime.ctx.emit("draft_submitted", draft_id="d-one", operations=1)
    two = svc.runtime.ctx.emit("draft_submitted", draft_id="d-two", operations=1)
    first = wait_for(lambda: event(base, one["seq"]).get("ripple"), timeout=10, what="the first wake-up")
    assert first["ok"] is True, first
    skipped = wait_for(lambda: event(base, two["seq"]).get("ripple"), timeout=10, what="the second's outcome")
    assert skipped.get("skipped"), skipped
    wait_for(lambda: (svc.runtime.board.get("ripple") or {}).get("waiting_to_retry") == ["draft_submitted"],
             timeout=5, what="the second kept for retry")

    r = requests.post(base + "/actors/ripple/restart", params={"force": "true"}, timeout=5)
    assert r.status_code == 202, r.text
    wait_for(lambda: ripple_row(base)["state"] == "running" and ripple_row(base)["restarts"] == 1, timeout=15,
             what="the ripple actor running again")
    assert not (rec.out / f"{first['pid']}.json").exists(), "the first ended before the restart; proves nothing"
    rec.release()                           # the first, still running after the restart, may end now
    # the wake-up for d-two, skipped while d-one's ran, fires once that one ends, restart or not
    retried = wait_for(lambda: (lambda o: o if o.get("ok") else None)(event(base, two["seq"])["ripple"]),
                       timeout=20, what="the kept wake-up to fire after the restart")
    assert retried["retried"] is True and retried["pid"] != first["pid"]
    assert rec.run(retried["pid"], timeout=15)["argv"][2] == "d-two"


def test_an_event_while_the_notifier_is_down_still_wakes_once_it_is_back(make_config, start_service, crashes,
                                                                       tmp_path):
    rec = Recorder(tmp_path)
    cfg = make_config(supervisor={**FAST, "max_restarts": 0},
                      ripple={"type": "script", "command": rec.command(), "run_as": getpass.getuser(),
                              "events": ["draft_submitted"]})
    svc = start_service(cfg, children=crashes.children)
    base = svc.url
    assert crashes.crash(svc.runtime, "notifier") is True
    wait_for(lambda: requests.get(base + "/actors", timeout=5).json()["actors"]["notifier"]["state"] == "failed",
             timeout=10, what="the notifier left down")
    ev = svc.runtime.ctx.emit("draft_submitted", draft_id="d-down", operations=1)
    r = requests.post(base + "/actors/notifier/restart", timeout=5)
    assert r.status_code == 202, r.text
    # the draft landed while the notifier was down: the main model is still woken for it once the notifier is back
    woke = wait_for(lambda: event(base, ev["seq"]).get("ripple"), timeout=10, what="the wake-up for d-down")
    assert woke["ok"] is True, woke
    assert rec.run(woke["pid"])["argv"][2] == "d-down"


def test_an_event_while_the_ripple_actor_is_down_still_wakes_once_it_is_back(make_config, start_service, crashes,
                                                                           tmp_path):
    rec, hook = Recorder(tmp_path), Receiver()
    cfg = make_config(supervisor={**FAST, "max_restarts": 0},
                      ripple={"type": "script", "command": rec.command(), "run_as": getpass.getuser(),
                              "events": ["draft_submitted"]},
                      notify={"webhook_url": hook.base + "/hook", "events": ["draft_submitted"]})
    svc = start_service(cfg, children=crashes.children)
    base = svc.url
    assert crashes.crash(svc.runtime, "ripple") is True
    wait_for(lambda: ripple_row(base)["state"] == "failed", timeout=10, what="the ripple actor left down")
    ev = svc.runtime.ctx.emit("draft_submitted", draft_id="d-down", operations=1)
    # the notifier has passed it on (to the ripple first, then the webhook) while the ripple actor was down
    wait_for(lambda: event(base, ev["seq"]).get("delivery"), timeout=10, what="the webhook's delivery")
    hook.close()
    r = requests.post(base + "/actors/ripple/restart", timeout=5)
    assert r.status_code == 202, r.text
    woke = wait_for(lambda: event(base, ev["seq"]).get("ripple"), timeout=10, what="the wake-up for d-down")
    assert woke["ok"] is True, woke
    assert rec.run(woke["pid"])["argv"][2] == "d-down"
