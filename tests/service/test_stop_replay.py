"""The service's stop during a replay's model call (an operator comparing a candidate model): the replay's call is
not waited for, as a sleep's is not (test_stop.py)."""
from __future__ import annotations

import threading
import time

import requests

from tests.harness.fake_model import FakeModel
from tests.harness.reviewer import wait_for
from tests.contract.test_replay import scripted
from tests.service.test_replay_service import run_a_chain

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
