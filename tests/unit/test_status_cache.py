"""/status is built once per change of what it is built from: after any change, the cached status is the
status built from scratch; without one, nothing is built again."""
from __future__ import annotations

import socket
from types import SimpleNamespace

import pytest

from actors.board import Board
from tests.harness.clock import FakeClock
from hippocampus.config import Config
from hippocampus.cycle.context import Context
from hippocampus.store.events import EventLog
from hippocampus.memory import MemoryClient
from hippocampus.model import size
from hippocampus.model.client import ModelClient
from hippocampus.store.state import State
from hippocampus.status.cache import StatusCache, encode
from hippocampus.status.read import build_status, built_from
from hippocampus.status.watch import memory_health, model_health
from hippocampus.cycle.snapshot import Snapshot
from hippocampus.store.voice import VoiceCard

def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def world(tmp_path):
    cfg = Config()
    cfg.model.url = f"http://127.0.0.1:{closed_port()}/v1"
    clock = FakeClock()
    memory = MemoryClient(f"http://127.0.0.1:{closed_port()}", timeout=1)
    cfg.model.write = "auto"
    ctx = Context(cfg=cfg, memory=memory, state=State(None), events=EventLog(None, clock), clock=clock,
                  voice=VoiceCard(tmp_path / "voice.json", max_chars=2000, clock=clock), model=ModelClient(cfg.model))
    rt = SimpleNamespace(cfg=cfg, ctx=ctx, board=Board())
    ctx.wire(rt.board.put)              # as the Runtime does: each owner publishes what /status shows
    builds = []

    def build():
        builds.append(1)
        return build_status(rt)
    cache = StatusCache(build, lambda: built_from(rt))
    return SimpleNamespace(rt=rt, ctx=ctx, clock=clock, fresh=lambda: build_status(rt), cache=cache, builds=builds)


CHANGES = {
    "an actor publishes": lambda w: w.rt.board.put("scheduler", {"ticks": 7, "next_tick_at": 5.0}),
    "the state is written": lambda w: w.ctx.state.set(brief_misses=2),
    "a cycle starts": lambda w: w.ctx.cycle.enter("sleep"),
    "a sleep's progress": lambda w: w.ctx.progress.update(what="sleeping", piles=3, piles_done=1),
    "a tick reads Memory": lambda w: setattr(w.ctx, "last_snapshot", Snapshot(at=w.clock.now())),
    "the clock moves a second": lambda w: w.clock.advance(1),
    "the event log cannot be written": lambda w: setattr(w.ctx.events, "write_error", "the disk is full"),
    # the watches publish what they read to the board (actors/watch.py)
    "Memory is looked at again": lambda w: w.rt.board.put("memory_health", memory_health(w.ctx.memory)),
    "the model is looked at again": lambda w: w.rt.board.put("model_health", model_health(w.rt.cfg.model)),
    "the voice card is written": lambda w: w.ctx.voice.set("I speak of myself as she."),
    # what the model server said of itself, learned by its client (model.learned)
    "the model refuses the schema": lambda w: w.ctx.model.learned.remember("refused", "json_schema not supported"),
    "auto chooses by the model's size": lambda w: w.ctx.model.learned.remember("chosen",
                                                                             size.choose("auto", 135_000_000)),
}


@pytest.mark.parametrize("change", CHANGES)
def test_after_a_change_the_cached_status_is_the_status_built_anew(world, change):
    before = world.cache.status()
    CHANGES[change](world)
    after = world.cache.status()
    assert after == world.fresh()
    assert after != before, "the change should show in the status"
    assert world.cache.body() == encode(after)


def test_without_a_change_the_status_is_built_once(world):
    world.cache.body()
    for _ in range(50):
        world.cache.body()
        world.cache.status()
    assert len(world.builds) == 1
    world.clock.advance(0.4)             # words are to the second: the same second builds nothing
    world.cache.body()
    assert len(world.builds) == 1


def test_a_caller_changing_its_status_changes_nobody_elses(world):
    mine = world.cache.status()
    mine["quality"] = {"added": "by MCP's sleep_status"}
    mine["say"]["headline"] = "changed"
    assert "quality" not in world.cache.status()
    assert world.cache.status()["say"]["headline"] != "changed"


def test_the_status_is_built_from_the_board_alone(world):
    """Each owner publishes what the status shows: a context with nothing but the clock and Memory's address
    builds the same status from the same board."""
    world.ctx.state.set(brief_misses=3)
    token = world.ctx.cycle.enter("sleep")
    world.ctx.progress.update(what="sleeping", piles=2, piles_done=1)
    world.ctx.last_snapshot = Snapshot(at=world.clock.now())
    world.ctx.voice.set("I speak of myself as she.")
    world.ctx.model.learned.remember("refused", "json_schema not supported")
    world.ctx.model.learned.remember("chosen", size.choose("auto", 134_515_008))
    bare = SimpleNamespace(cfg=world.rt.cfg, board=world.rt.board,
                           ctx=SimpleNamespace(clock=world.clock, memory=SimpleNamespace(url=world.ctx.memory.url)))
    s = build_status(bare)
    assert s == build_status(world.rt)
    assert (s["brief_misses"], s["busy"]["what"], s["progress"]["piles_done"]) == (3, "sleep", 1)
    assert s["voice"] == {"enabled": True, "version": 1}
    assert s["model_structured"]["refused"] == "json_schema not supported"
    assert (s["model_write"]["mode"], s["model_write"]["n_params"]) == ("extractive", 134_515_008)
    assert s["chain"]["at"] == world.clock.now()
    world.ctx.cycle.leave(token)
    world.ctx.progress.clear()
    s = build_status(bare)
    assert s["busy"] is None and s["progress"] == {}
