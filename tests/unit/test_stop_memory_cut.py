"""A Memory call in flight is cut by the service's stop from another thread (MemoryClient.cut): it ends at once as
a MemoryCut, which is both a ServiceStopping and a MemoryUnavailable, and no call goes out after."""
from __future__ import annotations

import gc
import threading
import time

import pytest

from hippocampus.memory import MemoryClient, MemoryCut, MemoryUnavailable
from hippocampus.stopping import ServiceStopping
from tests.harness.misbehaving import Misbehaving
from tests.harness.reviewer import wait_for


def test_cut_ends_a_call_memory_never_answers_at_once_and_refuses_the_next():
    memory = Misbehaving("silent")
    try:
        client = MemoryClient(memory.url, timeout=60)
        outcome: dict = {}

        def call():
            try:
                client.shorts()
            except Exception as exc:  # noqa: BLE001 - looked at below
                outcome["exc"] = exc
            outcome["at"] = time.monotonic()

        caller = threading.Thread(target=call)
        caller.start()
        wait_for(lambda: memory.requests == 1, timeout=10, what="the call to reach Memory")
        assert client.in_flight == 1
        t0 = time.monotonic()
        client.cut()
        caller.join(5)
        assert not caller.is_alive() and outcome["at"] - t0 < 1.0
        exc = outcome["exc"]
        assert isinstance(exc, MemoryCut) and isinstance(exc, ServiceStopping) and isinstance(exc, MemoryUnavailable)
        assert str(exc) == "the service is stopping: its call to SerenMemory (GET /short) was cut short"
        with pytest.raises(MemoryCut):
            client.health()
        assert memory.requests == 1, "a call after the stop reached Memory"
    finally:
        memory.close()


def test_the_sessions_of_threads_that_ended_are_not_kept_for_the_cut():
    client = MemoryClient("http://127.0.0.1:9")
    threads = [threading.Thread(target=lambda: pytest.raises(MemoryUnavailable, client.health)) for _ in range(5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    gc.collect()
    assert len(client._sessions) == 0 and client.in_flight == 0
