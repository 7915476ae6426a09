"""Links in the state folder are never followed (issue 38, 13): a `replays` link never lets the trim delete (or a
save write) the person's files elsewhere; only names the service writes are trimmed; a link where state.json or
events.jsonl should be never has its target written."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from hippocampus.clock import Clock
from hippocampus.store.events import EventLog
from hippocampus.store.packets import PacketStore
from hippocampus.store.state import State

pytestmark = pytest.mark.skipif(os.name == "nt", reason="POSIX links")


def _person_files(folder: Path, n: int) -> dict:
    folder.mkdir(parents=True)
    for i in range(n):
        p = folder / f"note-{i:03d}.json"
        p.write_text(json.dumps({"mine": i}), encoding="utf-8")
        os.utime(p, (1_000_000 + i, 1_000_000 + i))          # older than any packet
    return {p.name: p.read_bytes() for p in folder.iterdir()}


def _packet(draft_id: str) -> dict:
    return {"draft_id": draft_id, "calls": [{"topic": "tea", "prompt": "green tea"}]}


def test_a_replays_link_never_lets_the_trim_touch_the_files_it_points_to(tmp_path):
    elsewhere = tmp_path / "person" / "documents"
    before = _person_files(elsewhere, 320)
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    (state / "replays").symlink_to(elsewhere, target_is_directory=True)
    store = PacketStore(state / "replays")
    assert store.save(_packet("d1")) is False
    assert {p.name: p.read_bytes() for p in elsewhere.iterdir()} == before      # all 320, unchanged, none added
    assert store.paths() == [] and store.newest(5) == []


def test_the_trim_deletes_only_packets_never_other_names_or_links(tmp_path):
    elsewhere = tmp_path / "person"
    before = _person_files(elsewhere, 3)
    replays = tmp_path / "state" / "replays"
    store = PacketStore(replays, keep=2)
    replays.mkdir(parents=True, mode=0o700)
    (replays / "a.b.json").write_text("{}")                 # not a name the service writes
    (replays / "linked.json").symlink_to(elsewhere / "note-000.json")
    for i in range(4):
        assert store.save(_packet(f"d{i}"))
        os.utime(replays / f"d{i}.json", (2_000_000 + i, 2_000_000 + i))
    assert store.save(_packet("d9"))
    left = sorted(p.name for p in replays.iterdir())
    assert left == ["a.b.json", "d3.json", "d9.json", "linked.json"], left
    assert {p.name: p.read_bytes() for p in elsewhere.iterdir()} == before


def test_a_link_where_state_json_or_events_jsonl_should_be_never_has_its_target_written(tmp_path):
    target = tmp_path / "person" / "precious.txt"
    target.parent.mkdir()
    target.write_text("mine")
    state_dir = tmp_path / "state"
    state_dir.mkdir(mode=0o700)
    (state_dir / "state.json").symlink_to(target)
    (state_dir / "state.json.tmp").symlink_to(target)
    (state_dir / "events.jsonl").symlink_to(target)
    s = State(state_dir / "state.json")                    # the link is set aside, not read through
    s.set(brief_misses=3)
    assert target.read_text() == "mine" and s.write_error is None
    assert json.loads((state_dir / "state.json").read_text())["brief_misses"] == 3      # a file of its own now
    assert not (state_dir / "state.json").is_symlink()
    events = EventLog(state_dir / "events.jsonl", Clock())
    events.emit("sleep_done")
    assert target.read_text() == "mine"


def _linked(tmp_path, name: str, content: str):
    """A link planted at `name` in the state folder, to a sound file of the person's elsewhere."""
    target = tmp_path / "person" / f"{name}.elsewhere"
    target.parent.mkdir()
    target.write_text(content, encoding="utf-8")
    state_dir = tmp_path / "state"
    state_dir.mkdir(mode=0o700)
    (state_dir / name).symlink_to(target)
    return state_dir, target


def test_a_link_where_voice_json_should_be_is_not_read_through_and_is_said(tmp_path, caplog):
    from hippocampus.store.voice import VoiceCard
    card = {"versions": [{"version": 1, "text": "I am someone else", "set_at": 1.0, "why": None}]}
    state_dir, target = _linked(tmp_path, "voice.json", json.dumps(card))
    voice = VoiceCard(state_dir / "voice.json", 2000, Clock())
    assert voice.current() is None and voice.block() == ""          # the linked card never reaches a prompt
    error = voice.view().get("error") or ""
    assert "link" in error and str(state_dir / "voice.json") in error and "remove the link" in error, error
    assert any("remove the link" in r.getMessage() for r in caplog.records if r.levelname == "ERROR")
    said = voice.set("my own card")["set_aside"]                     # the link moved aside, never followed
    [aside] = state_dir.glob("voice.json.corrupt-*")
    assert aside.is_symlink() and str(aside) in said and voice.current()["text"] == "my own card"
    assert not (state_dir / "voice.json").is_symlink()
    assert json.loads(target.read_text(encoding="utf-8")) == card


def test_a_link_where_events_jsonl_should_be_is_not_read_through_and_is_said(tmp_path, caplog):
    line = json.dumps({"type": "sleep_done", "at": 1.0, "seq": 7, "note": "the person's own line"})
    state_dir, target = _linked(tmp_path, "events.jsonl", line + "\n")
    events = EventLog(state_dir / "events.jsonl", Clock())
    assert events.list() == []
    said = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert any("remove the link" in m and str(state_dir / "events.jsonl") in m for m in said), said
    assert "remove the link" in (events.write_error or ""), events.write_error
    assert target.read_text(encoding="utf-8") == line + "\n"


def test_a_state_file_that_cannot_be_written_is_said_once_per_change_not_per_write(tmp_path, caplog):
    state_dir = tmp_path / "state"
    state_dir.mkdir(mode=0o700)
    s = State(state_dir / "state.json")
    (state_dir / "state.json.tmp").mkdir()             # every write fails, as on a full disk
    for i in range(4):
        s.set(brief_misses=i)
    said = [r.getMessage() for r in caplog.records if "could not be written" in r.getMessage()]
    assert len(said) == 1 and s.write_error == said[0], said
    (state_dir / "state.json.tmp").rmdir()             # room again
    caplog.set_level("INFO")
    caplog.clear()
    s.set(brief_misses=9)
    s.set(brief_misses=10)
    again = [r.getMessage() for r in caplog.records if "state.json" in r.getMessage()]
    assert s.write_error is None and len(again) == 1 and "written again" in again[0], again
    assert json.loads((state_dir / "state.json").read_text())["brief_misses"] == 10


def test_a_log_another_process_holds_open_on_windows_is_not_blamed_on_the_disk(tmp_path, monkeypatch, caplog):
    """Windows refuses to rename a file another process has open (a ripple child writing ripple.log): the roll says
    that, and that it is moved at a later opening, not 'free disk space'."""
    from hippocampus.store import private
    log = tmp_path / "ripple.log"
    log.write_bytes(b"x" * 200)
    monkeypatch.setattr(private, "POSIX", False)

    def held(src, dst):
        exc = PermissionError(13, "The process cannot access the file because it is being used by another process",
                              str(src))
        exc.winerror = 32                                   # ERROR_SHARING_VIOLATION, as Windows sets it
        raise exc
    monkeypatch.setattr(private.os, "replace", held)
    private.roll(log, limit=100)
    said = [r.getMessage() for r in caplog.records]
    assert len(said) == 1 and "open" in said[0] and "free disk space" not in said[0], said
    assert log.read_bytes() == b"x" * 200


def test_a_held_folder_whose_lock_file_says_something_else_is_still_refused_in_one_line(tmp_path):
    """service.lock names its holder as a JSON mapping; another program (or a hand) that left other JSON there
    must not turn the refusal into a traceback."""
    import subprocess
    import sys
    from hippocampus.store import private
    folder = tmp_path / "state"
    folder.mkdir(mode=0o700)
    code = ("import fcntl, os, sys; f = open(sys.argv[1], 'w'); fcntl.flock(f, fcntl.LOCK_EX); f.write('[1, 2]'); "
            "f.flush(); print('held', flush=True); sys.stdin.read()")
    child = subprocess.Popen([sys.executable, "-c", code, str(folder / "service.lock")], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "held"
        with pytest.raises(private.FolderHeld, match="already runs on the state folder"):
            private.hold(folder)
    finally:
        child.stdin.close()
        child.wait(10)
