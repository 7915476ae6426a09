"""The event log on its own: two retentions, a burst as one event, an appended file that survives a crash."""
from __future__ import annotations

import contextlib
import json
import os

import pytest

from tests.harness.clock import FakeClock
from hippocampus.store.events import EventLog


@pytest.fixture
def clock():
    return FakeClock(1_800_000_000.0)


def _log(tmp_path, clock, keep=20) -> EventLog:
    return EventLog(tmp_path / "state" / "events.jsonl", clock, keep=keep)


def _types(ev: EventLog) -> list:
    return [e["type"] for e in reversed(ev.list(limit=10_000))]


def test_a_flood_of_nudges_and_brief_requests_never_pushes_out_the_events_that_matter(tmp_path, clock):
    ev = _log(tmp_path, clock, keep=20)
    ev.emit("sleep_done", operations=3)
    ev.emit("draft_submitted", draft_id="d-1", operations=3)
    ev.emit("actor_restarted", actor="sleeper")
    for i in range(2000):
        clock.advance(61)                          # far apart: each nudge is an event of its own
        ev.bump("nudged", within=60, woke=True)
        ev.emit("brief_requested", nudge=i)
    kept = _types(ev)
    assert kept[:3] == ["sleep_done", "draft_submitted", "actor_restarted"]
    assert kept.count("nudged") + kept.count("brief_requested") == 20      # the routine ones: their own 20
    assert [e["type"] for e in ev.list(limit=1, type_="draft_submitted")] == ["draft_submitted"]
    # the events that matter have their own retention too
    for i in range(25):
        ev.emit("chain_closed", cluster_id=f"c{i}")
    assert _types(ev).count("chain_closed") == 20 and "sleep_done" not in _types(ev)


def test_a_burst_of_nudges_is_one_event_with_a_count_and_listeners_hear_it_once(tmp_path, clock):
    ev = _log(tmp_path, clock)
    heard = []
    ev.subscribe(heard.append)
    first = ev.bump("nudged", within=60, woke=True)
    for _ in range(1999):
        clock.advance(0.01)
        ev.bump("nudged", within=60, woke=True)
    (nudged,) = ev.list(type_="nudged")
    assert nudged["count"] == 2000 and nudged["seq"] == first["seq"]
    assert nudged["at"] == first["at"] and nudged["last_at"] == pytest.approx(first["at"] + 19.99)
    assert [e["type"] for e in heard] == ["nudged"]
    # a minute of quiet, or something that matters, ends the burst
    clock.advance(61)
    ev.bump("nudged", within=60, woke=False)
    ev.emit("sleep_done", operations=0)
    ev.bump("nudged", within=60, woke=True)
    assert [e["count"] for e in ev.list(type_="nudged")] == [1, 1, 2000]


def test_the_file_is_appended_not_rewritten_per_event_and_read_back_whole(tmp_path, clock):
    ev = _log(tmp_path, clock, keep=500)
    path = ev.path
    ev.emit("sleep_done", operations=1)
    inode = os.stat(path).st_ino
    d = ev.emit("draft_submitted", draft_id="d-1")
    ev.annotate(d["seq"], delivered=True, ripple={"ok": True})
    for _ in range(50):
        ev.bump("nudged", within=60, woke=True)
    assert os.stat(path).st_ino == inode, "the file was replaced (rewritten) rather than appended to"
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 1 + 1 + 1 + 50           # an event or a change to one per line
    again = EventLog(path, clock, keep=500)       # no close: what was written is what a crash leaves
    assert again.list(limit=100) == ev.list(limit=100)
    assert again.list(type_="draft_submitted")[0]["ripple"] == {"ok": True}
    assert again.list(type_="nudged")[0]["count"] == 50
    assert again.emit("purged", ids=["x"])["seq"] == ev.list(limit=1)[0]["seq"] + 1


def test_a_torn_last_line_is_skipped_and_the_file_mended(tmp_path, clock):
    ev = _log(tmp_path, clock)
    ev.emit("sleep_done", operations=2)
    ev.emit("draft_submitted", draft_id="d-2")
    with open(ev.path, "ab") as fh:                # a crash halfway through writing the next line
        fh.write(b'{"type":"chain_closed","at":1800000000.0,"se')
    again = EventLog(ev.path, clock)
    assert _types(again) == ["sleep_done", "draft_submitted"]
    again.emit("chain_closed", cluster_id="c")
    third = EventLog(ev.path, clock)
    assert _types(third) == ["sleep_done", "draft_submitted", "chain_closed"]
    assert all(json.loads(line) for line in ev.path.read_text(encoding="utf-8").splitlines())


def test_unreadable_lines_are_kept_as_they_were_when_the_file_is_rewritten(tmp_path, clock, caplog):
    """The log said "skipped", but the next rewrite (at once, on load) dropped them for good: a line a person
    mistyped in a hand edit was lost instead of left for them to fix."""
    ev = _log(tmp_path, clock, keep=10)
    ev.emit("sleep_done", operations=2)
    bad = [b'{"type": "chain_closed", "seq": 2, "at": "yesterday"}', b"a note typed here by hand"]
    with open(ev.path, "ab") as fh:
        fh.write(b"\n".join(bad) + b"\n")
    again = _log(tmp_path, clock, keep=10)
    assert _types(again) == ["sleep_done"] and "2 unreadable line(s)" in caplog.text
    for i in range(300):                          # past twice what is kept: compacted more than once
        clock.advance(61)
        again.bump("nudged", within=60, woke=True)
    lines = again.path.read_bytes().splitlines()
    assert [line for line in lines if line in bad] == bad
    assert len(lines) <= 2 * 10 + 200 + 1 + len(bad)
    assert _log(tmp_path, clock, keep=10).list(limit=100) == again.list(limit=100)     # still skipped on read
    from hippocampus.store.scrub import cleaner
    assert again.scrub(cleaner({"typed here"}, ["typed here"]))          # a purge's text goes from them too
    assert b"a note [purged] by hand" in again.path.read_bytes().splitlines()


def test_an_unreadable_line_is_said_and_counted_whatever_the_last_line_is(tmp_path, clock, caplog):
    """A hand-edited line was kept without a word in the log when the file's last line was whole but had no
    newline (an editor's save), and a torn last line was counted as one more line "kept in the file"."""
    ev = _log(tmp_path, clock)
    ev.emit("sleep_done", operations=2)
    with open(ev.path, "ab") as fh:             # a line typed by hand, then a whole event with no newline
        fh.write(b'a note typed here by hand\n{"type":"chain_closed","seq":9,"at":1800000000.0}')
    _log(tmp_path, clock)
    assert "1 unreadable line(s)" in caplog.text
    caplog.clear()
    other = EventLog(tmp_path / "other" / "events.jsonl", clock)
    other.emit("sleep_done", operations=2)
    with open(other.path, "ab") as fh:          # the same line, and a torn last one (a crash mid-write)
        fh.write(b'a note typed here by hand\n{"type":"chain_closed","se')
    EventLog(other.path, clock)
    assert "torn line" in caplog.text and "1 unreadable line(s)" in caplog.text, caplog.text


def test_the_file_is_compacted_once_it_holds_twice_what_is_kept(tmp_path, clock):
    ev = _log(tmp_path, clock, keep=10)
    for i in range(1000):
        clock.advance(61)
        ev.bump("nudged", within=60, woke=True)
    lines = ev.path.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 2 * 10 + 200 + 1
    assert EventLog(ev.path, clock, keep=10).list(limit=100) == ev.list(limit=100)


def test_an_events_json_from_before_is_read_once_and_replaced(tmp_path, clock):
    folder = tmp_path / "state"
    folder.mkdir()
    old = [{"type": "sleep_done", "at": 1.0, "seq": 1, "operations": 2},
           {"type": "draft_submitted", "at": 2.0, "seq": 2, "draft_id": "d-old", "delivered": True}]
    (folder / "events.json").write_text(json.dumps({"events": old}), encoding="utf-8")
    ev = EventLog(folder / "events.jsonl", clock)
    assert list(reversed(ev.list())) == old
    assert not (folder / "events.json").exists()
    assert ev.emit("purged", ids=[])["seq"] == 3
    assert _types(EventLog(folder / "events.jsonl", clock)) == ["sleep_done", "draft_submitted", "purged"]


@contextlib.contextmanager
def _unwritable(ev, tmp_path):
    """The log's folder is a file while inside: every write under it fails; then the folder is back."""
    folder, aside = ev.path.parent, tmp_path / "aside"
    folder.rename(aside)
    folder.write_text("not a folder")
    try:
        yield
    finally:
        folder.unlink()
        aside.rename(folder)


def test_a_failed_write_says_so_and_the_next_good_one_rewrites_what_was_missed(tmp_path, clock):
    ev = _log(tmp_path, clock)
    ev.emit("sleep_done", operations=1)
    with _unwritable(ev, tmp_path):
        ev.emit("draft_submitted", draft_id="d-3")
        assert ev.write_error and "could not be written" in ev.write_error
    ev.emit("chain_closed", cluster_id="c")
    assert ev.write_error is None
    assert _types(EventLog(ev.path, clock)) == ["sleep_done", "draft_submitted", "chain_closed"]


@pytest.mark.skipif(os.name == "nt", reason="POSIX modes")
def test_the_log_and_its_folder_are_private(tmp_path, clock):
    ev = _log(tmp_path, clock, keep=10)
    for _ in range(300):                           # appends, and a compaction through a temp file
        clock.advance(61)
        ev.bump("nudged", within=60)
    assert oct(os.stat(ev.path.parent).st_mode & 0o777) == oct(0o700)
    assert [oct(p.stat().st_mode & 0o777) for p in ev.path.parent.iterdir()] == [oct(0o600)]


def test_a_failed_write_is_in_the_service_log_once_and_its_end_too(tmp_path, clock, caplog):
    caplog.set_level("INFO", logger="hippocampus.store.events")
    ev = _log(tmp_path, clock)
    ev.emit("sleep_done", operations=1)
    with _unwritable(ev, tmp_path):
        for i in range(3):
            ev.emit("draft_submitted", draft_id=f"d-{i}")
        said = [r for r in caplog.records if "could not be written" in r.getMessage()]
        assert [r.getMessage() for r in said] == [ev.write_error] and said[0].levelname == "ERROR"
    caplog.clear()
    ev.emit("chain_closed", cluster_id="c")
    ev.emit("chain_closed", cluster_id="d")
    assert [r.getMessage() for r in caplog.records] == [f"the event log {ev.path} is written again"]
