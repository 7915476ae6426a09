"""The service's stop stays within systemd's TimeoutStopSec=10: a replay's model call (an operator comparing a
candidate model) is not waited for, as a sleep's is not (test_stop.py), and a model stop command that hangs is given
seconds, not a minute."""
from __future__ import annotations

import contextlib
import threading
import time

import requests

from tests.harness.fake_model import FakeModel
from tests.harness.reviewer import wait_for
from tests.contract.test_replay import scripted
from tests.service.test_replay_service import run_a_chain
from tests.service.test_lifecycle_service import stand  # noqa: F401 - the stand-in llama-server fixture

STOP_WITHIN = 5.0       # as test_stop.py: systemd's TimeoutStopSec=10 with room to spare


def test_a_stop_during_a_replays_60_s_model_call_does_not_wait_on_it(make_config, start_service, hand, fake_model):
    fake_model.responder = scripted
    cand = FakeModel([{"content": '{"operations": []}', "delay": 60}]).start()
    try:
        svc = start_service(make_config(model={"url": fake_model.url, "name": "first-model"},
                                        replay={"candidates": {"cand": {"url": cand.url, "timeout_seconds": 120}}}))
        draft = run_a_chain(svc, hand)
        answer: dict = {}

        def replay():
            r = requests.post(svc.url + f"/replay/{draft['id']}", json={"candidate": "cand"}, timeout=90)
            answer["status"] = r.status_code

        threading.Thread(target=replay, daemon=True).start()
        wait_for(lambda: cand.in_flight == 1, timeout=20, what="the replay's call to be under way")
        t0 = time.monotonic()
        svc.request_stop()                          # what SIGTERM does
        assert svc.wait_stopped(30), "the service did not stop"
        took = time.monotonic() - t0
        assert took < STOP_WITHIN, f"the stop took {took:.1f} s, waiting on the replay's model call"
        assert answer.get("status") == 503
    finally:
        cand.release()
        cand.stop()


def test_the_services_stop_with_a_hung_model_stop_command_ends_within_systemds_10_s_and_keeps_the_record(
        make_config, start_service, hand, stand, tmp_path):
    """A model.lifecycle.stop that hangs (a `docker stop` on a stuck container) at the service's stop: the stop
    stays within TimeoutStopSec=10, and the state file keeps the model for the next run to stop."""
    from tests.service.test_lifecycle_restart import slept

    hung = tmp_path / "stop-hung"
    hung.write_text("#!/bin/sh\nsleep 120\n")
    hung.chmod(0o755)
    svc = start_service(make_config(model={"url": stand.url, "lifecycle": stand.lifecycle(stop=str(hung),
                                                                                          stop_grace_seconds=20)}))
    _, _, pid = slept(svc, hand)
    assert pid
    t0 = time.monotonic()
    svc.request_stop()                              # what SIGTERM does
    assert svc.wait_stopped(30), "the service did not stop"
    took = time.monotonic() - t0
    assert took < 8, f"the stop took {took:.1f} s of systemd's 10"
    kept = svc.runtime.ctx.state.get("lifecycle")
    assert kept["started_by_us"] is True and "did not end within 3 s" in kept["unstopped"], kept


def test_sigterm_with_two_actors_in_slow_memory_calls_cuts_them_and_exits_0_within_systemds_10_s(tmp_path):
    """Memory takes every call and never answers (60 s allowed): at SIGTERM the queue watch is in its first read
    and the sleeper in a sleep by hand. The stop cuts their Memory calls MEMORY_CUT_SECONDS into it, as it cuts a
    model call: the process exits 0 inside systemd's TimeoutStopSec=10, the log says the call was cut, and no
    actor is left behind."""
    import signal

    with _on_a_silent_memory(tmp_path) as (memory, p):
        port = p.bound_port()
        threading.Thread(target=lambda: requests.post(f"http://127.0.0.1:{port}/sleep", timeout=90),
                         daemon=True).start()
        requests_before = memory.requests
        p.wait_for(lambda: memory.requests > requests_before, 20, "the sleep's Memory call to be under way")
        rc = p.stop(signal.SIGTERM, within=5)
        err = p.stderr()
        assert rc == 0, err
        assert "call(s) to SerenMemory still under way 1.5 s into the stop are cut short" in err, err
        assert "still busy" not in err and "Traceback" not in err, err


def test_an_actor_still_busy_at_the_end_of_the_stop_is_named_in_the_log_and_left_behind(
        make_config, start_service, crashes, caplog):
    """A step stuck on something the stop cannot cut (here: the sleeper held): the stop waits STOP_SECONDS in all
    for its actors, then leaves that one behind, saying which it was."""
    from actors.supervisor import STOP_SECONDS

    svc = start_service(make_config(), children=crashes.children)
    release = threading.Event()
    try:
        svc.runtime.registry.proxy("sleeper").hold.defer(release)
        t0 = time.monotonic()
        svc.request_stop()                          # what SIGTERM does
        assert svc.wait_stopped(30), "the service did not stop"
        took = time.monotonic() - t0
    finally:
        release.set()
    assert STOP_SECONDS - 0.5 < took < STOP_SECONDS + 1.5, took
    assert "actor sleeper was still busy at the end of the stop: it is abandoned" in caplog.text, caplog.text


@contextlib.contextmanager
def _on_a_silent_memory(tmp_path):
    """(Memory that takes every call and never answers, the service as a process on it in external mode)."""
    from tests.harness.misbehaving import Misbehaving
    from tests.service.test_process import Proc, _yaml

    memory = Misbehaving("silent")
    p = None
    try:
        cfg = _yaml(tmp_path / "h.yaml", {"server": {"port": 0}, "memory": {"url": memory.url, "timeout_seconds": 60},
                                           "sleep": {"mode": "external",
                                                     "state_path": str(tmp_path / "state" / "state.json")}})
        p = Proc(tmp_path, cfg)
        yield memory, p
    finally:
        if p is not None:
            p.kill()
        memory.close()


def test_sigterm_while_the_service_starts_exits_0_at_once_saying_it_was_stopped_while_starting(tmp_path):
    """SIGTERM before "ready on" (the first read of Memory is slow: it never answers): the process exits 0 within
    seconds, never says it is ready, and the log says it was stopped while starting."""
    import signal

    with _on_a_silent_memory(tmp_path) as (memory, p):
        p.wait_for(lambda: memory.requests > 0, 30, "the first read of Memory")
        assert "ready on" not in p.stderr()
        rc = p.stop(signal.SIGTERM, within=5)
        err = p.stderr()
        assert rc == 0, err
        assert "stopped while starting" in err and "ready on" not in err, err


def test_the_hosted_services_stop_with_a_sleep_stuck_leaves_it_and_ends_within_systemds_10_s(tmp_path, monkeypatch):
    """The service hosted without a console (the Windows service): its stop leaves the sleeper the actors' stop
    abandoned (its sleep stuck on something the stop cannot cut), rather than waiting on it again (the wait hint
    out, and "the stop failed" in its log)."""
    from hippocampus.cycle import executor
    from hippocampus.service.host import ServiceHost
    from tests.harness.misbehaving import Misbehaving
    from tests.service.test_process import _yaml

    stuck = threading.Event()
    monkeypatch.setattr(executor, "sleep_by_hand", lambda *a, **kw: stuck.wait(60))
    memory = Misbehaving("silent")
    host = None
    try:
        (tmp_path / "app").mkdir()
        cfg = _yaml(tmp_path / "app" / "h.yaml", {
            "server": {"port": 0}, "memory": {"url": memory.url, "timeout_seconds": 60},
            "sleep": {"mode": "external", "state_path": str(tmp_path / "state" / "state.json")}})
        host = ServiceHost(cfg, tmp_path / "logs").start()
        threading.Thread(target=lambda: requests.post(host.url + "/sleep", timeout=90), daemon=True).start()
        wait_for(lambda: (host.service.runtime.board.get("sleeper") or {}).get("busy"), timeout=20,
                 what="the sleep to be under way")
        took = host.stop(wait_hint_seconds=15)
        text = (tmp_path / "logs" / "seren-hippocampus.log").read_text(encoding="utf-8")
        assert took < 9, f"the stop took {took:.1f} s\n{text}"
        assert "the stop failed" not in text and "actor sleeper was still busy (sleep)" in text, text
    finally:
        stuck.set()
        if host is not None:
            host.stop(wait_hint_seconds=15)
        memory.close()


def test_a_request_that_hangs_past_the_drain_does_not_hold_the_stop_longer(make_config, start_service, caplog):
    """A request that never ends (a handler stuck on a call nothing cuts) gets the drain's 3 s like any other, then
    is abandoned: the stop does not wait longer on its thread (waitress's own 5 s more), so the actors' 7 s from
    SIGTERM are still theirs and the whole stop stays inside systemd's TimeoutStopSec=10."""
    from hippocampus.service.root import STOP_DRAIN_SECONDS

    release = threading.Event()

    class Hung:
        def on_get(self, req, resp):
            release.wait(60)
            resp.media = {"late": True}

    svc = start_service(make_config())
    svc.app.add_route("/test-hung", Hung())
    try:
        def ask():
            with contextlib.suppress(requests.RequestException):     # the drain's end closes its connection
                requests.get(svc.url + "/test-hung", timeout=90)

        threading.Thread(target=ask, daemon=True).start()
        wait_for(lambda: svc.server.task_dispatcher.active_count == 1, timeout=10, what="the request to be under way")
        t0 = time.monotonic()
        svc.request_stop()                          # what SIGTERM does
        assert svc.wait_stopped(30), "the service did not stop"
        took = time.monotonic() - t0
        assert took < STOP_DRAIN_SECONDS + 1.5, f"the stop took {took:.1f} s behind a request that hangs"
        assert "1 request(s) still running after the stop's drain: abandoned" in caplog.text, caplog.text
    finally:
        release.set()
