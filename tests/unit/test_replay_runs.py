"""The replays as plain objects, without the actor: where a run goes is handed in (the service hands it to the
replay actor, actors/replay.py); one runs at a time; a run the actor could not take ends failed at once and
leaves the way free for the next."""
from __future__ import annotations


import pytest

from hippocampus import config as cm
from hippocampus.cycle.context import Context
from hippocampus.memory import MemoryClient
from hippocampus.replay.service import ReplayBusy, Replays
from hippocampus.stopping import ServiceStopping
from hippocampus.store.capture import store_for
from hippocampus.store.events import EventLog
from hippocampus.store.state import State
from tests.harness.clock import FakeClock
from tests.harness.memory_server import free_port


@pytest.fixture
def ctx(tmp_path):
    cfg = cm.build({"memory": {"url": f"http://127.0.0.1:{free_port()}"},
                    "model": {"url": f"http://127.0.0.1:{free_port()}/v1", "name": "small"},
                    "sleep": {"state_path": str(tmp_path / "state" / "state.json")}}, environ={})
    (tmp_path / "state").mkdir(mode=0o700)
    clock = FakeClock()
    store_for(cfg).save({"version": 1, "draft_id": "d1", "created_at": clock.now(), "attempt": 1, "calls": [],
                         "operations": []})
    return Context(cfg=cfg, memory=MemoryClient(cfg.memory.url, timeout=1), state=State(None),
                   events=EventLog(None, clock), clock=clock)


def test_without_an_actor_a_replay_runs_on_the_callers_thread_and_is_done_when_it_returns(ctx):
    run = Replays(ctx).replay("d1", wait=0)
    assert run.done.is_set() and run.finished_at is not None
    assert Replays(ctx).replay("d1", wait=0).id != run.id          # ids are the run's own


def test_one_replay_at_a_time_until_the_actor_has_run_it(ctx):
    held = []
    replays = Replays(ctx, start=lambda r, *job: held.append((r, job)))
    first = replays.replay("d1", wait=0)
    assert not first.done.is_set() and replays.runs()["running"]["run"] == first.id
    with pytest.raises(ReplayBusy):
        replays.replay("d1", wait=0)
    r, job = held.pop()
    r.work(*job)                                    # what the replay actor does with it
    assert first.done.is_set() and replays.runs()["running"] is None
    assert replays.replay("d1", wait=0).id != first.id


def test_a_run_the_actor_could_not_take_ends_failed_at_once_and_the_next_may_start(ctx):
    def down(*_):
        raise RuntimeError("the replay actor is down (restarting or failed): see /actors")
    replays = Replays(ctx, start=down)
    run = replays.replay("d1", wait=5)
    assert run.done.is_set() and run.result is None
    assert run.error.startswith("the replay was not started: ") and "the replay actor is down" in run.error
    assert replays.runs()["runs"][0]["failed"] is True
    replays.start = lambda r, *job: r.work(*job)
    assert replays.replay("d1", wait=5).done.is_set()


def test_a_stop_while_waiting_for_a_run_is_said_as_the_stop(ctx):
    replays = Replays(ctx, start=lambda r, *job: None)          # the actor never runs it
    ctx.stopping.set()
    with pytest.raises(ServiceStopping, match="the service is stopping: the replay was cut short"):
        replays.replay("d1", wait=5)
