"""The log says when Memory or the model stops answering and when it is back, once per change, with the URL
(secrets hidden) and what waits on it; each change is an event and so a webhook (issue 32, item 2). The real
process, its real stderr, a real SerenMemory and a real fake model reached through a relay that opens late."""
from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
import requests

from tests.harness.fake_model import FakeModel
from tests.harness.memory_server import free_port
from tests.harness.receiver import Receiver
from tests.harness.relay import Relay
from tests.service.test_process import Proc, _yaml

READY = re.compile(r"ready on (http://\S+)")


@pytest.fixture
def rig(memory):
    model = FakeModel().start()
    hook = Receiver()
    mem_relay = Relay(free_port(), ("127.0.0.1", int(memory.url.rsplit(":", 1)[1].split("/")[0])))
    model_relay = Relay(free_port(), ("127.0.0.1", model.port))
    procs: list = []
    yield model, hook, mem_relay, model_relay, procs
    for p in procs:
        p.kill()
    for r in (mem_relay, model_relay):
        r.close()
    hook.close()
    model.stop()


def _lines(p: Proc, needle: str) -> list:
    return [ln for ln in p.stderr().splitlines() if needle in ln]


def _events(url: str) -> list:
    return [e["type"] for e in reversed(requests.get(url + "/events", params={"limit": 50}, timeout=5).json()
                                        ["entries"])]


@pytest.mark.timeout(120)
def test_memory_and_the_model_going_away_and_coming_back_are_each_said_once(rig, tmp_path: Path):
    model, hook, mem_relay, model_relay, procs = rig
    mem_url = f"http://user:pw@127.0.0.1:{mem_relay.port}"
    cfg = _yaml(tmp_path / "h.yaml", {
        "server": {"port": 0},
        "memory": {"url": mem_url, "timeout_seconds": 1},
        "model": {"url": f"http://127.0.0.1:{model_relay.port}/v1"},
        "sleep": {"mode": "external", "state_path": str(tmp_path / "s" / "state.json")},
        "supervisor": {"check_seconds": 0.1},         # a shorter beat than the default half second
        "notify": {"webhook_url": hook.url, "events": ["memory_down", "memory_back", "model_down", "model_back"]},
    })
    p = Proc(tmp_path, cfg)
    procs.append(p)
    base = p.wait_for(lambda: (m := READY.search(p.stderr())) and m.group(1), 60, "the ready line")

    down = p.wait_for(lambda: _lines(p, "Memory at "), 20, "the line that says Memory is not answering")
    assert f"Memory at http://***@127.0.0.1:{mem_relay.port} is not answering" in down[0], down
    assert "WARNING" in down[0] and "the sleeps, tends and checks, and the review queue wait on it" in down[0]
    assert "user:pw" not in p.stderr()
    gone = p.wait_for(lambda: _lines(p, "The model at "), 30, "the line that says the model is not answering")
    assert f"The model at http://127.0.0.1:{model_relay.port}/v1 is not answering (" in gone[0], gone
    assert "the next sleep's drafting and each redraft wait on it" in gone[0]

    # Memory is read again (every 5 s) while still down: nothing more is said
    first = requests.get(base + "/status", timeout=5).json()["memory"]["checked_at"]
    p.wait_for(lambda: requests.get(base + "/status", timeout=5).json()["memory"]["checked_at"] > first, 20,
               "a second read of Memory")
    assert len(_lines(p, "Memory at ")) == 1, p.stderr()

    mem_relay.open()
    model_relay.open()
    back = p.wait_for(lambda: _lines(p, "answers again"), 20, "the line that says Memory is back")
    p.wait_for(lambda: len(_lines(p, "answers again")) == 2, 30, "the line that says the model is back")
    back = _lines(p, "answers again")
    assert any(f"Memory at http://***@127.0.0.1:{mem_relay.port} answers again after" in ln and "s down: the "
               "sleeps, tends and checks, and the review queue go on" in ln for ln in back), back
    assert any(f"The model at http://127.0.0.1:{model_relay.port}/v1 answers again after" in ln for ln in back)
    assert len(_lines(p, "Memory at ")) == 2 and len(_lines(p, "The model at ")) == 2, p.stderr()

    types = [t for t in _events(base) if t.startswith(("memory_", "model_"))]
    assert sorted(types) == ["memory_back", "memory_down", "model_back", "model_down"], types
    assert types.index("memory_down") < types.index("memory_back")
    ev = requests.get(base + "/events", params={"type": "memory_down"}, timeout=5).json()["entries"][0]
    assert ev["url"] == f"http://***@127.0.0.1:{mem_relay.port}" and ev["waiting"], ev
    hooked = p.wait_for(lambda: len(hook.requests) >= 4 and hook.requests, 20, "the four webhooks")
    assert sorted(r["body"]["type"] for r in hooked) == ["memory_back", "memory_down", "model_back", "model_down"]


def test_a_memory_that_answers_from_the_start_says_nothing(memory, tmp_path: Path):
    cfg = _yaml(tmp_path / "h.yaml", {"server": {"port": 0}, "memory": {"url": memory.url}, "model": {"url": ""},
                                      "sleep": {"mode": "external", "state_path": str(tmp_path / "s" / "state.json")},
                                      "supervisor": {"check_seconds": 0.1}})
    p = Proc(tmp_path, cfg)
    try:
        base = p.wait_for(lambda: (m := READY.search(p.stderr())) and m.group(1), 60, "the ready line")
        assert requests.get(base + "/health", timeout=5).json()["memory_reachable"] is True
        time.sleep(0.5)     # a few beats: nothing to say, so nothing is said (an absence cannot be polled for)
        assert not _lines(p, "Memory at ") and not _lines(p, "answers again"), p.stderr()
        assert not [t for t in _events(base) if t.startswith("memory_")]
    finally:
        p.kill()
