"""The test-only fault hooks are off unless a test turns them on: then an injected crash does nothing."""
from __future__ import annotations

import logging

import pytest

from actors import faults
from actors.faults import Crash, FaultsOff
from tests.harness.reviewer import wait_for
from tests.service.test_actors import FAST, events_of
from tests.service.test_actors import actors as actor_table


@pytest.fixture
def faults_off():
    was = faults.allow(False)
    yield
    faults.allow(was)


def test_without_the_switch_an_injected_crash_does_nothing(make_config, start_service, faults_off, caplog):
    svc = start_service(make_config(supervisor=FAST))
    ref = svc.runtime.registry.get("chain")

    with pytest.raises(FaultsOff, match="test-only"):
        svc.runtime.inject_fault("chain")
    with pytest.raises(FaultsOff):
        svc.runtime.inject_fault("ripple", "on_start")
    assert svc.runtime.faults == {}, "a refused on_start fault was still armed"

    with caplog.at_level(logging.WARNING, logger="hippocampus.actors"):
        assert svc.runtime.tell("chain", Crash()) is True          # one that reaches the child anyway
        wait_for(lambda: any("refused an injected crash" in r.getMessage() for r in caplog.records),
                 timeout=10, what="the chain to refuse the crash")
    assert ref.is_alive() and svc.runtime.registry.get("chain") is ref    # the same actor, still running
    table = actor_table(svc.url)
    assert table["chain"]["state"] == "running" and table["chain"]["restarts"] == 0, table["chain"]
    assert events_of(svc.url, "actor_crashed") == []


def test_with_the_switch_the_same_crash_restarts_the_child(make_config, start_service):
    assert faults.allowed(), "tests/conftest.py turns the fault hooks on"
    svc = start_service(make_config(supervisor=FAST))
    ref = svc.runtime.registry.get("chain")
    assert svc.runtime.tell("chain", Crash()) is True
    wait_for(lambda: (actor_table(svc.url).get("chain") or {}).get("restarts") == 1, timeout=10,
             what="the chain to be restarted")
    assert svc.runtime.registry.get("chain") is not ref
