"""A stop that never waits on the model: SIGTERM during a 60 s model call, the service as a real process."""
from __future__ import annotations

import contextlib
import json
import os
import signal
import threading
import time

import pytest
import requests

from tests.harness.fake_model import FakeModel
from tests.harness.memory_server import free_port
from tests.harness.reviewer import wait_for
from tests.reliability.helpers import seed
from tests.service.test_process import Proc, _yaml
from tests.service.test_tend import REDRAFT, deny_garden, pending_draft, scripted_model
from tests.service.test_tend import seed as seed_chain

pytestmark = pytest.mark.skipif(os.name == "nt", reason="POSIX signals")

STOP_WITHIN = 5.0


@pytest.fixture
def slow_model():
    fm = FakeModel([{"content": '{"operations": []}', "delay": 60}]).start()
    yield fm
    fm.stop()


def test_sigterm_during_a_60_s_model_call_exits_0_within_5_s_and_the_sleep_is_interrupted(
        tmp_path, memory, hand, slow_model):
    brief_id = seed(hand)
    port = free_port()
    state = tmp_path / "state" / "state.json"
    cfg = _yaml(tmp_path / "h.yaml", {"server": {"port": port}, "memory": {"url": memory.url},
                                       "model": {"url": slow_model.url, "timeout_seconds": 120},
                                       "sleep": {"mode": "external", "state_path": str(state),
                                                 "promote_min_evidence": 2}})
    p = Proc(tmp_path, cfg)
    try:
        p.wait_healthy(port)
        answer: dict = {}

        def sleep_by_hand():
            try:
                r = requests.post(f"http://127.0.0.1:{port}/sleep", timeout=90)
                answer["status"], answer["body"] = r.status_code, r.json()
            except Exception as exc:  # noqa: BLE001 - reported below
                answer["error"] = repr(exc)

        caller = threading.Thread(target=sleep_by_hand)
        caller.start()
        p.wait_for(lambda: slow_model.in_flight == 1, 30, "the sleep's model call to be under way")

        t0 = time.monotonic()
        rc = p.stop(signal.SIGTERM, within=STOP_WITHIN)
        took = time.monotonic() - t0
        caller.join(10)
        err = p.stderr()
        assert rc == 0, err
        print(f"\nSIGTERM during a 60 s model call: exited {rc} after {took:.2f} s")
    finally:
        p.kill()

    # the request in flight was answered, saying why
    assert answer.get("status") == 503, (answer, err)
    assert "the service is stopping" in answer["body"]["detail"], answer
    # nothing was posted and the brief stays open for the next start
    assert hand.drafts() == []
    assert brief_id in [b["id"] for b in hand.open_briefs()]
    # the history says interrupted, not failed (and not "the model lifecycle actor is restarting")
    saved = json.loads(state.read_text(encoding="utf-8"))
    row = saved["history"][-1]
    assert row["kind"] == "sleep" and row["error"] is None, row
    assert "the service is stopping" in row["interrupted"], row
    assert saved["last_sleep"]["interrupted"] and saved["last_sleep_ok_at"] is None
    events = [json.loads(line) for line in (state.parent / "events.jsonl").read_text().splitlines()]
    types = [e.get("type") for e in events]
    assert "sleep_interrupted" in types and "sleep_failed" not in types, types
    assert "Traceback" not in err and "lifecycle actor is restarting" not in err, err
    assert "the model call in flight was abandoned" in err, err


def test_a_stop_during_a_redraft_answers_503_and_records_the_tend_as_interrupted(
        make_config, start_service, hand, fake_model):
    def slow_redraft(body: dict) -> dict:
        reply = scripted_model(body)
        if REDRAFT in body["messages"][-1]["content"]:
            reply["delay"] = 60
        return reply

    fake_model.responder = slow_redraft
    svc = start_service(make_config(model={"url": fake_model.url}))
    base = svc.url
    seed_chain(hand)
    assert requests.post(base + "/sleep", timeout=60).json()["draft_id"]
    deny_garden(hand, pending_draft(hand, 1), "The rose garden bloomed early")
    answer: dict = {}

    def tend():
        r = requests.post(base + "/tend", timeout=90)
        answer["status"], answer["body"] = r.status_code, r.json()

    caller = threading.Thread(target=tend)
    caller.start()
    wait_for(lambda: fake_model.in_flight == 1, timeout=30, what="the redraft's model call")
    t0 = time.monotonic()
    svc.request_stop()
    assert svc.wait_stopped(STOP_WITHIN), "the service did not stop"
    caller.join(STOP_WITHIN)
    assert time.monotonic() - t0 < STOP_WITHIN
    assert answer.get("status") == 503 and "the service is stopping" in answer["body"]["detail"], answer
    assert [d["attempt"] for d in hand.drafts("pending")] == [], "a redraft was posted"
    history = svc.runtime.ctx.state.get("history")
    assert history[-1]["kind"] == "tend" and history[-1]["error"] is None
    assert "the service is stopping" in history[-1]["interrupted"]
    types = [e["type"] for e in svc.runtime.events.list(limit=100)]
    assert "tend_interrupted" in types and "redraft_failed" not in types, types


class _HoldingDrafts:
    """A relay in front of Memory that holds every POST /drafts (it never reaches Memory, nothing answers it):
    a Memory that hangs on the sleep's submit."""

    def __init__(self, memory_url: str):
        from urllib.parse import urlsplit

        from tests.harness.relay import RecordingProxy

        target = urlsplit(memory_url)
        held, release = threading.Event(), threading.Event()

        class Proxy(RecordingProxy):
            def seen(self, src, data):
                if src in self._clients and data.startswith(b"POST /drafts "):
                    held.set()
                    release.wait(60)

            def _pipe(self, src, dst):
                if src in self._clients:
                    return super()._pipe(src, dst)
                with contextlib.suppress(OSError):      # Memory's side: its idle close is not passed on
                    while data := src.recv(65536):
                        dst.sendall(data)

        self.held, self.release = held, release
        self.proxy = Proxy((target.hostname, target.port)).open()
        self.url = self.proxy.url

    def close(self):
        self.release.set()
        self.proxy.close()


def test_a_stop_while_the_sleeps_submit_hangs_cuts_it_and_records_the_sleep_as_interrupted_keeping_its_brief(
        make_config, start_service, memory, hand, caplog):
    """Memory takes the sleep's POST /drafts and never answers (60 s allowed): the stop cuts that call, as it cuts a
    model call, rather than abandoning the sleeper with it: the history and the events say the sleep was
    interrupted by the stop, the brief stays open, and the record of the submit stays for the next start."""
    brief_id = seed(hand)
    holding = _HoldingDrafts(memory.url)
    try:
        svc = start_service(make_config(memory={"url": holding.url, "timeout_seconds": 60}))
        answer: dict = {}

        def sleep_by_hand():
            r = requests.post(svc.url + "/sleep", timeout=90)
            answer["status"], answer["body"] = r.status_code, r.json()

        caller = threading.Thread(target=sleep_by_hand)
        caller.start()
        wait_for(holding.held.is_set, timeout=30, what="the sleep's POST /drafts to be under way")
        t0 = time.monotonic()
        svc.request_stop()                          # what SIGTERM does
        assert svc.wait_stopped(STOP_WITHIN), "the service did not stop"
        took = time.monotonic() - t0
        caller.join(STOP_WITHIN)
        assert took < STOP_WITHIN, took
        assert answer.get("status") == 503 and "the service is stopping" in answer["body"]["detail"], answer
        state = svc.runtime.ctx.state       # read before the relay lets the held call go
        row = state.get("history")[-1]
        assert row["kind"] == "sleep" and row["error"] is None, row
        assert "the service is stopping" in row["interrupted"] and "POST /drafts" in row["interrupted"], row
        types = [e["type"] for e in svc.runtime.events.list(limit=100)]
        assert "sleep_interrupted" in types and "sleep_failed" not in types, types
        assert brief_id in [b["id"] for b in hand.open_briefs()] and hand.drafts() == []
        assert (state.get("submitting") or {}).get("brief_id") == brief_id     # the next start looks for the draft
        assert "still busy" not in caplog.text and "under way 1.5 s into the stop are cut short" in caplog.text
    finally:
        holding.close()
