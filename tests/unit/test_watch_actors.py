"""The one background pattern (actors/watch.py): a watch reads on its own actor's thread when the beat finds
it due, a Recheck during a read causes exactly one more, a hung read holds no other watch, and an idle beat
changes nothing on the board (so /status is not built again for nothing)."""
from __future__ import annotations

import threading
from types import SimpleNamespace

import pytest

from actors.board import Board
from actors.supervisor import Registry
from actors.watch import WatchActor
from hippocampus.config import Config
from hippocampus.demo.waiting import wait_for


@pytest.fixture
def rt():
    return SimpleNamespace(cfg=Config(), board=Board(), registry=Registry(), tick_flags={})


class Gated(WatchActor):
    """A read that waits for the test to let it finish."""
    name = "gated"

    def __init__(self, supervisor, runtime, gate) -> None:
        super().__init__(supervisor, runtime)
        self.gate = gate

    def read(self) -> dict:
        self.gate["runs"].append(threading.current_thread().name)
        self.gate["started"].set()
        self.gate["release"].wait(10)
        return {"n": len(self.gate["runs"])}


class Quick(WatchActor):
    name = "quick"

    def read(self) -> dict:
        return {"read": True}


def test_a_recheck_during_a_read_reads_once_more_and_a_hung_read_holds_no_other_watch(rt):
    gate = {"runs": [], "started": threading.Event(), "release": threading.Event()}
    slow, quick = Gated.start(None, rt, gate), Quick.start(None, rt)
    try:
        slow.proxy().beat.defer(0)
        assert gate["started"].wait(5)
        told = slow.proxy()
        told.recheck.defer()                    # two asks during a run: one more run
        told.recheck.defer()
        told.beat.defer(1)
        told.beat.defer(2)
        quick.proxy().beat.defer(0)
        wait_for(lambda: rt.board.get("quick") == {"read": True}, timeout=5, what="the other watch's view")
        assert rt.board.get("gated") == {}, "the slow watch published before its read ended"
        gate["release"].set()
        wait_for(lambda: (rt.board.get("gated") or {}).get("n") == 2, timeout=5, what="the second read")
        slow.proxy().ping().get(timeout=5)
        assert len(gate["runs"]) == 2 and threading.current_thread().name not in gate["runs"]
    finally:
        gate["release"].set()
        slow.stop()
        quick.stop()


def test_an_idle_beat_puts_nothing_on_the_board(rt):
    quick = Quick.start(None, rt)
    try:
        quick.proxy().beat.defer(0)
        quick.proxy().ping().get(timeout=5)
        version = rt.board.version
        for i in range(5):
            quick.proxy().beat.defer(i + 1)
        quick.proxy().ping().get(timeout=5)
        assert rt.board.version == version, "a beat with nothing new to read changed the board"
        quick.proxy().recheck.defer()
        quick.proxy().beat.defer(9)
        quick.proxy().ping().get(timeout=5)
        assert rt.board.version == version + 1, "a recheck's read did not reach the board"
    finally:
        quick.stop()


def test_a_wake_up_check_that_raises_is_shown_and_logged_and_the_watch_reads_again(rt, monkeypatch, caplog):
    """The check itself failing (not a wake-up that would fail) keeps the watch alive, puts the failure in
    words on the board and in the status's wake-up line, and the next Recheck reads again."""
    from actors import watch
    from hippocampus.status.narrator import wakeup_line

    def broken(cfg):
        raise PermissionError(13, "Permission denied", "/home/wren/.claude.json")
    monkeypatch.setattr(watch, "service_view", broken)
    w = watch.WakeupWatch.start(None, rt)
    try:
        w.proxy().beat.defer(0)
        wait_for(lambda: (rt.board.get("wakeup") or {}).get("ok", 0) is None
                 and "failed" in (rt.board.get("wakeup") or {}).get("summary", ""), timeout=5, what="the failure")
        view = rt.board.get("wakeup")
        assert view["summary"].startswith("the wake-up check failed: "), view
        assert "Permission denied" in view["summary"] and "/home/wren/.claude.json" in view["summary"], view
        assert wakeup_line(view, 0).startswith("Wake-up: the wake-up check failed: "), wakeup_line(view, 0)
        assert any(r.getMessage() == "the wake-up check failed" and r.exc_info for r in caplog.records)
        monkeypatch.setattr(watch, "service_view", lambda cfg: {"ok": True, "summary": "would work", "lines": []})
        w.proxy().recheck.defer()
        w.proxy().beat.defer(1)
        wait_for(lambda: (rt.board.get("wakeup") or {}).get("ok") is True, timeout=5, what="the next read")
    finally:
        w.stop()


class Looked(WatchActor):
    """A watch read on every beat while someone looks (the Memory, model and queue watches)."""
    name = "looked"
    looked_at = True

    def __init__(self, supervisor, runtime, reads) -> None:
        super().__init__(supervisor, runtime)
        self.reads = reads

    def read(self) -> dict:
        self.reads.append(1)
        return {"n": len(self.reads)}


def test_a_watch_reads_on_every_beat_while_someone_looks_and_at_its_own_pace_when_nobody_does(rt):
    from hippocampus.status.looks import Looks
    rt.looks = Looks(seconds=0.3)
    reads: list = []
    watch = Looked.start(None, rt, reads)
    try:
        def beats(n: int, start: int) -> int:
            for i in range(n):
                watch.proxy().beat.defer(start + i)
            watch.proxy().ping().get(timeout=5)
            return len(reads)
        assert beats(1, 0) == 1                 # the first beat reads
        assert beats(3, 1) == 1, "nobody looks: the beat read Memory anyway"
        rt.looks.look()
        assert beats(3, 4) == 4, "someone looks: each beat reads"
        wait_for(lambda: not rt.looks.watched(), timeout=5, what="the look to be old")
        assert beats(3, 7) == 4, "the look is over: the beats still read"
    finally:
        watch.stop()


def test_a_memory_read_the_stop_cut_says_nothing_of_memory(rt, caplog):
    """Found: the stop cuts Memory calls in flight (MemoryCut); the Memory watch's read cut so logged "Memory at
    ... is not answering" and emitted a Memory-down change while Memory was fine: a stop is no outage."""
    from actors.watch import MemoryWatch
    from hippocampus.memory import MemoryCut

    class Cut:
        def health(self):
            raise MemoryCut("GET", "/health")

    said = []
    rt.ctx = SimpleNamespace(memory=Cut(), copies_announced=True)
    rt.events = SimpleNamespace(emit=lambda kind, **fields: said.append(kind))
    rt.stopping = True
    watch = MemoryWatch(None, rt)
    up = {"reachable": True, "error": None, "not_memory": False, "checked_at": 1.0, "up_at": 1.0}
    watch.view = up
    with caplog.at_level("INFO"):
        assert watch.read() == up
    assert said == [] and "not answering" not in caplog.text
