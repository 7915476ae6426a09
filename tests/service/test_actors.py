"""The actor tree under supervision (issue 3): crashes, restarts, a crash storm, the operator's restart,
an on_start death, a busy cycle that never stalls /status, and a clean shutdown.

Everything runs in-process against the real SerenMemory; only the small model is faked.
"""
from __future__ import annotations

import threading
import time

import pykka
import requests

from tests.harness.reviewer import wait_for

FAST = {"backoff_seconds": 0.05, "check_seconds": 0.05}
CHILDREN = {"scheduler", "chain", "sleeper", "lifecycle", "ripple", "notifier", "quality", "replay",
            "memory_health", "model_health", "wakeup", "queue"}      # the last five are the watches (actors/watch.py)


def actors(base: str) -> dict:
    r = requests.get(base + "/actors", timeout=5)
    assert r.status_code == 200, r.text
    return r.json()["actors"]


def event_types(base: str) -> list:
    return [e["type"] for e in requests.get(base + "/events", params={"limit": 1000}, timeout=5).json()["entries"]]


def events_of(base: str, type_: str) -> list:
    return requests.get(base + "/events", params={"type": type_, "limit": 1000}, timeout=5).json()["entries"]


def wait_running(base: str, name: str, restarts: int, timeout: float = 10.0) -> dict:
    def ok():
        a = actors(base).get(name) or {}
        return a if a.get("state") == "running" and a.get("restarts") == restarts else None
    return wait_for(ok, timeout=timeout, what=f"{name} running with {restarts} restart(s)")


def test_a_crashed_child_is_restarted_and_the_others_keep_answering(make_config, start_service, crashes):
    svc = start_service(make_config(supervisor=FAST), children=crashes.children)
    base = svc.url
    table = actors(base)
    assert set(table) == CHILDREN
    assert all(a["state"] == "running" and a["restarts"] == 0 for a in table.values()), table

    assert crashes.crash(svc.runtime, "chain") is True
    # while the chain is down or coming back, the others answer
    r = requests.post(base + "/check", timeout=30)
    assert r.status_code == 200, r.text
    assert r.json()["status"] in {"not_bedtime", "waiting_for_brief"}, r.json()
    assert requests.get(base + "/status", timeout=5).status_code == 200

    a = wait_running(base, "chain", 1)
    assert "injected crash in chain" in (a["last_error"] or "")
    others = actors(base)
    assert all(others[n]["state"] == "running" and others[n]["restarts"] == 0 for n in CHILDREN - {"chain"})

    st = requests.get(base + "/status", timeout=5).json()
    assert st["actors"]["chain"]["restarts"] == 1
    assert st["actors"]["chain"]["state"] == "running"
    crashed = events_of(base, "actor_crashed")
    restarted = events_of(base, "actor_restarted")
    assert [e["actor"] for e in crashed] == ["chain"], crashed
    assert [e["actor"] for e in restarted] == ["chain"], restarted
    assert "injected crash" in crashed[0]["error"]
    # the new chain answers: a tend by hand goes through it
    r = requests.post(base + "/tend", timeout=30)
    assert r.status_code == 200, r.text


def test_a_crash_storm_ends_failed_and_the_operator_brings_it_back(make_config, start_service, crashes):
    svc = start_service(make_config(supervisor=FAST), children=crashes.children)
    base = svc.url
    for n in range(1, 4):                      # max_restarts is 3: three crashes are restarted
        assert crashes.crash(svc.runtime, "chain") is True
        wait_running(base, "chain", n)
    assert crashes.crash(svc.runtime, "chain") is True    # the fourth inside the window: failed
    wait_for(lambda: (actors(base).get("chain") or {}).get("state") == "failed", timeout=10, what="chain failed")
    time.sleep(0.3)                            # several supervisor ticks: it stays down
    a = actors(base)["chain"]
    assert a["state"] == "failed" and a["restarts"] == 3, a
    failed = events_of(base, "actor_failed")
    assert [e["actor"] for e in failed] == ["chain"], failed
    assert len(events_of(base, "actor_crashed")) == 4
    st = requests.get(base + "/status", timeout=5).json()
    assert st["actors"]["chain"]["state"] == "failed"
    # the part in words (its name is the details view's, and /actors'), and what to press
    assert st["explain"] == ("The part that follows drafts through review crashed too often and is down: press "
                             "Restart beside it under Details."), st["explain"]
    # with the chain down, its route says so rather than hanging
    r = requests.post(base + "/tend", timeout=10)
    assert r.status_code == 503, r.text
    assert "chain" in r.json()["detail"]
    # ...and the others still answer
    assert requests.post(base + "/check", timeout=30).status_code == 200

    r = requests.post(base + "/actors/chain/restart", timeout=20)
    assert r.status_code == 202, r.text
    # answered at once (issue 38, item 11): the supervisor restarts it in the background
    assert r.json()["actor"] == "chain" and r.json()["state"] == "restarting"
    a = wait_running(base, "chain", 4)
    assert events_of(base, "actor_restarted")[0].get("by") == "operator"
    assert requests.post(base + "/tend", timeout=30).status_code == 200


def test_a_child_that_cannot_be_built_backs_off_and_ends_failed(make_config, start_service, crashes):
    """A restart whose constructor raises is a crash like any other: backed off, counted, and after max_restarts
    left failed for the operator, not retried at every beat for ever with the error logged each time."""
    svc = start_service(make_config(supervisor=FAST), children=crashes.children)
    base = svc.url
    crashes.refused.add("chain")
    assert crashes.crash(svc.runtime, "chain") is True
    def failed():
        a = actors(base).get("chain") or {}
        return a if a.get("state") == "failed" else None
    a = wait_for(failed, timeout=10, what="chain failed after its restarts could not build it")
    assert a["restarts"] == 3, a                                  # max_restarts 3: three tries, then down
    assert crashes.built_refused["chain"] == 3, crashes.built_refused
    assert "injected constructor fault in chain" in (a["last_error"] or ""), a
    crashed = [e for e in events_of(base, "actor_crashed") if e["actor"] == "chain"]
    assert len(crashed) == 4, crashed                             # the tell, then each refused construction
    assert [e["actor"] for e in events_of(base, "actor_failed")] == ["chain"]
    assert requests.get(base + "/status", timeout=5).json()["actors"]["chain"]["state"] == "failed"
    # once whatever stopped it is mended, the operator's restart brings it back
    crashes.refused.discard("chain")
    assert requests.post(base + "/actors/chain/restart", timeout=20).status_code == 202
    wait_running(base, "chain", 4)
    assert crashes.built_refused["chain"] == 3
    assert requests.post(base + "/tend", timeout=30).status_code == 200


def test_operator_restart_answers_404_and_409_unless_forced(make_config, start_service):
    svc = start_service(make_config(supervisor=FAST))
    base = svc.url
    r = requests.post(base + "/actors/nosuch/restart", timeout=10)
    assert r.status_code == 404, r.text
    assert "nosuch" in r.json()["detail"] and "chain" in r.json()["detail"]

    r = requests.post(base + "/actors/chain/restart", timeout=10)
    assert r.status_code == 409, r.text
    assert "force=true" in r.json()["detail"]
    assert actors(base)["chain"]["restarts"] == 0

    old_ref = svc.runtime.registry.get("chain")
    r = requests.post(base + "/actors/chain/restart", params={"force": "true"}, timeout=20)
    assert r.status_code == 202, r.text
    a = wait_running(base, "chain", 1)
    assert a["state"] == "running"
    new_ref = svc.runtime.registry.get("chain")
    assert new_ref is not None and new_ref.actor_urn != old_ref.actor_urn
    assert not old_ref.is_alive()
    assert requests.post(base + "/tend", timeout=30).status_code == 200

    r = requests.post(base + "/actors/chain/restart", params={"force": "maybe"}, timeout=10)
    assert r.status_code == 400, r.text


def test_a_child_that_dies_in_on_start_is_caught_by_the_liveness_check(make_config, start_service, crashes):
    svc = start_service(make_config(supervisor=FAST), children=crashes.children)
    base = svc.url
    # the crash restarts it; the new instance dies in on_start (no on_failure: only is_alive() sees it)
    assert crashes.crash(svc.runtime, "ripple", "on_start") is True
    wait_running(base, "ripple", 2)
    crashed = events_of(base, "actor_crashed")
    errors = [e["error"] for e in crashed if e["actor"] == "ripple"]
    assert len(errors) == 2, crashed
    assert any("died while starting" in e for e in errors), errors
    assert [e["actor"] for e in events_of(base, "actor_restarted")] == ["ripple", "ripple"]
    ref = svc.runtime.registry.get("ripple")
    assert ref is not None and ref.is_alive()
    assert all(a["state"] == "running" for a in actors(base).values())


def test_status_never_waits_on_a_busy_sleep(make_config, start_service, fake_model, hand):
    fake_model.replies = [{"content": '{"operations": []}', "delay": 5}]
    for i in range(3):
        hand.short(f"the lighthouse keeper story part {i} with the long stairs", topic="lighthouse, stories")
    hand.brief("we kept coming back to the lighthouse keeper story", promote=["lighthouse"])
    svc = start_service(make_config(supervisor=FAST, model={"url": fake_model.url}))
    base = svc.url
    out: dict = {}

    def check():
        out["check"] = requests.post(base + "/check", timeout=120)

    t = threading.Thread(target=check, name="background-check", daemon=True)
    t.start()
    try:
        wait_for(lambda: fake_model.in_flight > 0, timeout=15, what="the model call under way")
        st = requests.get(base + "/status", timeout=5).json()
        assert st["busy"] and st["busy"]["what"] == "check", st["busy"]
        timings = []
        for _ in range(20):
            t0 = time.perf_counter()
            r = requests.get(base + "/status", timeout=5)
            timings.append(time.perf_counter() - t0)
            assert r.status_code == 200
        assert max(timings) < 0.2, [round(x, 3) for x in timings]
        assert fake_model.in_flight > 0, "the model call ended before the measurements; the test proves nothing"

        r = requests.post(base + "/sleep", params={"without_brief": "true"}, timeout=5)
        assert r.status_code == 409, r.text
        assert r.json()["detail"].startswith("busy:"), r.json()
        r = requests.post(base + "/check", timeout=5)
        assert r.status_code == 409 and r.json()["detail"].startswith("busy:")
        r = requests.post(base + "/tend", timeout=5)
        assert r.status_code == 409 and r.json()["detail"].startswith("busy:")
        fake_model.release()                   # measured while busy: the check may end now
    finally:
        t.join(60)
    assert not t.is_alive()
    assert out["check"].status_code == 200, out["check"].text
    assert requests.get(base + "/status", timeout=5).json()["busy"] is None


def test_shutdown_leaves_no_actor_and_no_thread(make_config, start_service, crashes):
    svc = start_service(make_config(supervisor=FAST), children=crashes.children)
    assert requests.get(svc.url + "/health", timeout=5).json()["ok"] is True
    assert len(pykka.ActorRegistry.get_all()) == 1 + len(CHILDREN)     # the supervisor and its children
    crashes.crash(svc.runtime, "notifier")                     # a restart on the way out changes nothing
    wait_running(svc.url, "notifier", 1)
    svc.request_stop(drain_seconds=5)
    assert svc.wait_stopped(30), "the service did not stop"
    assert pykka.ActorRegistry.get_all() == []
    leftover = [t for t in threading.enumerate() if not t.daemon and t is not threading.main_thread()]
    assert leftover == [], leftover
    assert all(a["state"] == "stopped" for a in svc.runtime.board.get("actors").values())
    try:
        requests.get(svc.url + "/health", timeout=2)
        raise AssertionError("the listener is still open after the stop")
    except requests.ConnectionError:
        pass


def test_a_tick_handed_to_a_sleeper_that_crashes_before_reading_it_lets_the_cycle_go(make_config, start_service,
                                                                                     crashes):
    """The chain hands the rest of a tick (and the cycle lock) to the sleeper; the sleeper dies of an earlier tell
    before it reads it: the tick still ends (counted, the lock let go), and the restarted sleeper ticks again."""
    svc = start_service(make_config(supervisor=FAST, sleep={"nudge_wait_seconds": 0}), children=crashes.children)
    rt, release = svc.runtime, threading.Event()
    try:
        rt.sleeper().hold.defer(release)             # busy: what is told meanwhile queues behind the crash
        assert crashes.crash(rt, "sleeper") is True
        requests.post(svc.url + "/nudge", timeout=5)
        wait_for(lambda: not rt.board.get("chain")["busy"] and rt.ctx.cycle.holder() is not None
                 and rt.registry.get("sleeper").actor_inbox.qsize() == 2, timeout=10, what="the tick at the sleeper")
    finally:
        release.set()
    wait_for(lambda: rt.board.get("ticks")["ticks"] == 1, timeout=10, what="the tick to end")
    assert rt.ctx.cycle.holder() is None and rt.board.get("ticks")["ticking"] is False
    wait_running(svc.url, "sleeper", 1)
    requests.post(svc.url + "/nudge", timeout=5)
    last = wait_for(lambda: rt.board.get("ticks")["ticks"] == 2 and rt.board.get("ticks")["last_tick"],
                    timeout=10, what="the next tick")
    assert last["check"] is not None, last
