"""A model call in flight is abandoned from another thread: closed at once, not waited for."""
from __future__ import annotations

import threading
import time

import pytest

from hippocampus.config import ModelConfig
from hippocampus.model.client import ModelClient, ModelFailure
from hippocampus.stopping import ServiceStopping
from tests.harness.reviewer import wait_for


def test_abandon_ends_a_60_s_call_at_once_and_refuses_the_next(fake_model):
    fake_model.replies = [{"content": "late", "delay": 60}]
    client = ModelClient(ModelConfig(url=fake_model.url, timeout_seconds=120))
    outcome: dict = {}

    def call():
        try:
            client.chat("draft this")
        except Exception as exc:  # noqa: BLE001 - looked at below
            outcome["exc"] = exc
        outcome["at"] = time.monotonic()

    caller = threading.Thread(target=call)
    caller.start()
    wait_for(lambda: fake_model.in_flight == 1, timeout=10, what="the call to reach the model")
    assert client.in_flight == 1
    t0 = time.monotonic()
    assert client.abandon() == 1
    caller.join(5)
    assert not caller.is_alive() and outcome["at"] - t0 < 1.0
    assert isinstance(outcome["exc"], ServiceStopping), outcome
    assert "the service is stopping" in str(outcome["exc"]) and "abandoned" in str(outcome["exc"])
    sent = len(fake_model.requests)
    with pytest.raises(ServiceStopping):
        client.chat("and this")
    assert len(fake_model.requests) == sent, "a call after the stop reached the model"


def test_a_broken_connection_without_a_stop_is_still_a_model_failure(fake_model):
    fake_model.replies = [{"content": "x", "status": 500}]
    client = ModelClient(ModelConfig(url=fake_model.url))
    with pytest.raises(ModelFailure):
        client.chat("draft this")
    assert client.in_flight == 0
