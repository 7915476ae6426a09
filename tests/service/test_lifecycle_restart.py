"""An operator's restart of the lifecycle actor (POST /actors/lifecycle/restart?force=true) restarts the actor, not
the small model: a server it started (or is starting) stays up, held by the next instance, and only the service's
own stop stops it with "the service is shutting down"."""
from __future__ import annotations

import os
import shlex
import signal
import threading

import pytest
import requests

from tests.harness.clock import pid_alive
from tests.harness.reviewer import wait_for
from tests.service.test_lifecycle_service import events, gone, lifecycle_of, seed, sleep_now, stand  # noqa: F401

pytestmark = pytest.mark.skipif(os.name == "nt", reason="process groups and the sh wrapper are POSIX")
FAST = {"backoff_seconds": 0.05, "check_seconds": 0.05}


def restart_lifecycle(base: str) -> None:
    r = requests.post(base + "/actors/lifecycle/restart", params={"force": "true"}, timeout=5)
    assert r.status_code == 202, r.text
    wait_for(lambda: (lambda row: row["state"] == "running" and row["restarts"] == 1)(
        requests.get(base + "/actors", timeout=5).json()["actors"]["lifecycle"]), timeout=20,
        what="the lifecycle actor running again")


def slept(svc, hand) -> tuple:
    """(the base URL, the first sleep's report, the pid of the model it started)."""
    seed(hand)
    report = sleep_now(svc.url)
    assert report["error"] is None and report["draft_id"], report
    return svc.url, report, lifecycle_of(svc.url)["pid"]


def left_down(svc, crashes) -> None:
    assert crashes.crash(svc.runtime, "lifecycle") is True
    wait_for(lambda: requests.get(svc.url + "/actors", timeout=5).json()["actors"]["lifecycle"]["state"] == "failed",
             timeout=10, what="the lifecycle actor left down")


def loading(make_config, start_service, hand, stand, warmup: float, **cfg) -> tuple:
    """A service whose sleep has launched the model, still loading it (`warmup` s, or until the test calls the
    release it is given, once what it needed the load for is seen): (the service, where the sleep's report lands,
    the sleep's thread, the model's pid, the release). The actor is busy in the start, its snapshot not out."""
    text, loaded = stand.server.read_text(), stand.server.parent / "loaded"
    stand.server.write_text(text.replace("FAKE_LLAMA_WARMUP=0.3", f"FAKE_LLAMA_WARMUP={warmup:g}\n"   # a slow load
                                         f"export FAKE_LLAMA_RELEASE={shlex.quote(str(loaded))}"))
    svc = start_service(make_config(model={"url": stand.url, "lifecycle": stand.lifecycle()}, **cfg))
    seed(hand)
    done: dict = {}
    sleeping = threading.Thread(target=lambda: done.update(report=sleep_now(svc.url)), daemon=True)
    sleeping.start()
    pid = wait_for(lambda: (svc.runtime.ctx.state.get("lifecycle") or {}).get("pid"), timeout=10,
                   what="the model to be launched")
    assert not stand.answering()
    return svc, done, sleeping, pid, lambda: loaded.write_text("loaded")


def test_a_forced_restart_of_the_lifecycle_actor_leaves_the_model_up(make_config, start_service, hand, stand):
    cfg = make_config(supervisor=FAST, model={"url": stand.url, "lifecycle": stand.lifecycle()})
    svc = start_service(cfg)
    base, report, pid = slept(svc, hand)
    assert pid and pid_alive(pid)

    restart_lifecycle(base)
    after = lifecycle_of(base)
    assert events(base, "model_stopped") == [], "an actor's restart is not the service stopping"
    assert pid_alive(pid) and stand.answering()
    assert after["pid"] == pid and after["started_by_us"] is True and after["state"] == "ready"
    svc.request_stop(drain_seconds=5)
    assert svc.wait_stopped(30)
    assert gone(pid)                                    # still ours: the service's stop stops it
    stopped = [e for e in svc.runtime.events.list(limit=1000) if e["type"] == "model_stopped"]
    assert [e["why"] for e in stopped] == ["the service is shutting down"]


def test_a_forced_restart_while_the_model_loads_keeps_the_server_it_started(make_config, start_service, hand,
                                                                          stand):
    svc, done, sleeping, pid, _ = loading(make_config, start_service, hand, stand, warmup=3, supervisor=FAST)
    base = svc.url

    restart_lifecycle(base)
    sleeping.join(60)
    assert "report" in done     # (it may have failed with "restarting", if it asked while no instance was up)
    assert events(base, "model_stopped") == [], "the model being started was stopped by an actor's restart"
    assert pid_alive(pid) and stand.answering()
    after = lifecycle_of(base)
    assert after["pid"] == pid and after["started_by_us"] is True
    if done["report"]["error"] is not None:
        seed(hand, topic="coffee")
        report = sleep_now(base)        # the next sleep uses the server the first one started
        assert report["error"] is None and report["draft_id"], report
    assert len(events(base, "model_started")) == 1 and lifecycle_of(base)["pid"] == pid


def test_the_service_stop_stops_the_model_while_the_lifecycle_actor_is_left_down(make_config, start_service, hand,
                                                                                 stand, crashes):
    cfg = make_config(supervisor={**FAST, "max_restarts": 0}, model={"url": stand.url, "lifecycle": stand.lifecycle()})
    svc = start_service(cfg, children=crashes.children)
    base, report, pid = slept(svc, hand)
    left_down(svc, crashes)
    assert pid_alive(pid)
    svc.request_stop(drain_seconds=5)
    assert svc.wait_stopped(30)
    assert gone(pid), "the service stopped and left the model it started running"
    stopped = [e for e in svc.runtime.events.list(limit=1000) if e["type"] == "model_stopped"]
    assert [e["why"] for e in stopped] == ["the service is shutting down"]


def test_the_cycle_over_while_the_lifecycle_actor_is_down_still_stops_the_model_once_it_is_back(
        make_config, start_service, hand, stand, crashes):
    # external mode: no tick comes on a timer; the one that closed the chain is the one that stops the model
    cfg = make_config(supervisor={**FAST, "max_restarts": 0}, model={"url": stand.url, "lifecycle": stand.lifecycle()})
    svc = start_service(cfg, children=crashes.children)
    base, report, pid = slept(svc, hand)
    left_down(svc, crashes)
    hand.approve_all(report["draft_id"])
    assert requests.post(base + "/nudge", timeout=5).json()["woke"] is True
    wait_for(lambda: events(base, "chain_closed"), timeout=10, what="the nudged tick to close the chain")
    wait_for(lambda: not (svc.runtime.board.get("ticks") or {}).get("ticking"), timeout=10, what="that tick's end")
    assert pid_alive(pid) and events(base, "model_stopped") == []
    r = requests.post(base + "/actors/lifecycle/restart", timeout=5)
    assert r.status_code == 202, r.text
    stopped = wait_for(lambda: events(base, "model_stopped"), timeout=10, what="the model stopped: the cycle is over")
    assert [e["why"] for e in stopped] == ["the cycle is over"] and gone(pid)


def test_a_replay_on_the_managed_model_is_not_cut_by_a_tick_with_no_chain_open(make_config, start_service, hand,
                                                                              stand, tmp_path):
    cfg = make_config(supervisor=FAST, model={"url": stand.url, "lifecycle": stand.lifecycle()},
                      sleep={"mode": "thread", "tick_seconds": 0.1, "brief_request": False})
    svc = start_service(cfg)
    base, report, _ = slept(svc, hand)
    hand.approve_all(report["draft_id"])
    wait_for(lambda: events(base, "model_stopped"), timeout=10, what="the cycle over, the model stopped")
    shim = tmp_path / "bin" / "slow_llama.py"
    shim.write_text(shim.read_text().replace("time.sleep(0.25)", "time.sleep(2.0)"))    # a slow answer
    r = requests.post(base + f"/replay/{report['draft_id']}", json={}, timeout=60)
    assert r.status_code == 200, r.text
    calls = r.json()["candidate"]["calls"]
    assert [c["error"] for c in calls] == [None] and calls[0]["ops"], calls     # the model answered, whole


def test_status_says_the_model_is_starting_while_it_loads(make_config, start_service, hand, stand):
    svc, done, sleeping, _, release = loading(make_config, start_service, hand, stand, warmup=4)
    base = svc.url
    seen = wait_for(lambda: (lambda lc: lc if lc.get("state") != "stopped" else None)(lifecycle_of(base)),
                    timeout=2, what="/status to say the model is no longer stopped")
    assert seen["state"] == "starting" and not stand.answering(), seen
    release()                               # seen starting while it loads: the load may end now
    sleeping.join(60)
    assert done["report"]["error"] is None, done
    assert lifecycle_of(base)["state"] == "ready"


def test_in_external_mode_the_model_still_stops_keep_warm_seconds_after_its_last_use(make_config, start_service,
                                                                                   hand, stand):
    # external mode: something else POSTs /sleep, /tend and /check; no tick runs here unless a nudge comes
    cfg = make_config(supervisor=FAST, model={"url": stand.url, "lifecycle": stand.lifecycle(keep_warm_seconds=1)})
    svc = start_service(cfg)
    base, report, pid = slept(svc, hand)
    stopped = wait_for(lambda: events(base, "model_stopped"), timeout=10, what="the keep-warm stop")
    assert len(stopped) == 1 and 1.0 <= stopped[0]["idle_seconds"] < 5.0, stopped     # a beat after keep_warm
    assert gone(pid) and not stand.answering() and lifecycle_of(base)["state"] == "stopped"
    assert hand.drafts("pending")           # the chain is still open: only the model went


def test_a_model_server_that_dies_on_its_own_is_not_shown_ready(make_config, start_service, hand, stand):
    cfg = make_config(supervisor=FAST, model={"url": stand.url, "lifecycle": stand.lifecycle()})
    svc = start_service(cfg)
    base, report, pid = slept(svc, hand)
    os.kill(pid, signal.SIGKILL)            # as the kernel's OOM killer would
    assert gone(pid)
    after = wait_for(lambda: (lambda lc: lc if lc["state"] != "ready" else None)(lifecycle_of(base)), timeout=10,
                     what="/status to stop saying ready")
    assert after["state"] == "stopped" and after["pid"] is None and after["started_by_us"] is False
    [stopped] = events(base, "model_stopped")
    assert "exited on its own" in stopped["why"] and "idle_seconds" not in stopped, stopped
