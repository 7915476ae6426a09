"""The event log: the newest `keep` events that matter and, apart, the newest `keep` routine ones (nudges,
brief requests), so a flood of nudges never pushes a sleep out.

On disk, `events.jsonl`: one line per event and one per later change to it, appended before the call returns
(fsynced for events that matter). A torn last line is skipped on load; the file is compacted once it holds
twice what is kept, after a failed write, and after a torn line. A whole line that cannot be read (a hand edit) is
skipped too, but kept as it was, at the top, whenever the file is rewritten: left for the person to fix.
"""
from __future__ import annotations

import collections
import contextlib
import itertools
import json
import logging
import os
import threading
from pathlib import Path
from typing import Any, Callable, Optional

from hippocampus.store import private
from hippocampus.config import redact
from hippocampus.clock import Clock

log = logging.getLogger(__name__)

FILE_NAME = "events.jsonl"
LEGACY_NAME = "events.json"                       # one JSON document, rewritten per event (until 2026-12)
ROUTINE = frozenset({"nudged", "brief_requested"})
COMPACT_SLACK = 200                               # lines beyond twice the kept events before a compaction


class EventLog:
    def __init__(self, path: Optional[Path], clock: Clock, keep: int = 500):
        self.path = Path(path) if path else None
        self.clock = clock
        self.keep = keep
        self._lock = threading.RLock()          # the events: held briefly, never across a disk write
        self._write_lock = threading.Lock()     # the file: one writer at a time, lines in seq order
        self._events: dict = {}                 # seq -> event, oldest first
        self._kept = {True: collections.deque(), False: collections.deque()}   # matters? -> seqs
        self._last_mattering = 0                # the seq of the newest event that matters
        self._bursts: dict = {}                 # type -> the seq of its open burst
        self._listeners: list = []
        self._lines = 0                         # lines in the file
        self._unreadable: list = []             # whole lines that could not be read, kept as they were
        self._rewrite = False                   # a write failed: the next one rewrites the whole file
        self._write_error: Optional[str] = None
        if self.path:
            self._load()
        self._seq = itertools.count(max(self._events, default=0) + 1)

    publish = staticmethod(lambda error: None)     # the board's (Context.wire): write_error, when it changes

    @property
    def write_error(self) -> Optional[str]:
        return self._write_error

    @write_error.setter
    def write_error(self, error: Optional[str]) -> None:
        if error != self._write_error:
            if error:                    # the service log hears it once per change, as /status shows it
                log.error(error)
            elif "could not be written" in (self._write_error or ""):
                log.info("the event log %s is written again", self.path)
            self._write_error = error
            self.publish(error)

    def subscribe(self, listener: Callable[[dict], None]) -> None:
        self._listeners.append(listener)

    def emit(self, type_: str, **fields: Any) -> dict:
        return self._record(type_, None, fields)

    def bump(self, type_: str, within: float, **fields: Any) -> dict:
        """A burst as one event: the open `type_` event gets count + 1 and last_at now, if its last one was at
        most `within` s ago and nothing that matters happened since; else a new one. Listeners hear it once."""
        return self._record(type_, within, fields)

    def _record(self, type_: str, within: Optional[float], fields: dict) -> dict:
        """emit (within None: always a new event, with no count and no burst) or bump."""
        fields = redact.deep(fields)            # an error that quotes a URL keeps no user:password@ or ?key=
        with self._write_lock:
            with self._lock:
                now = self.clock.now()
                event = self._events.get(self._bursts.get(type_)) if within is not None else None
                folded = event is not None and event["seq"] > self._last_mattering and \
                    now - float(event.get("last_at") or event["at"]) <= within
                if folded:
                    change = {**fields, "count": int(event.get("count") or 1) + 1, "last_at": now}
                    event.update(change)
                    line = _line({"patch": event["seq"], "set": change})
                    event = dict(event)
                else:
                    burst = {} if within is None else {"count": 1, "last_at": now}
                    event = {"type": type_, "at": now, "seq": next(self._seq), **fields, **burst}
                    self._add(event)
                    if within is not None:
                        self._bursts[type_] = event["seq"]
                    line = _line(event)
            self._append(line, sync=type_ not in ROUTINE)
        if not folded:
            self._tell(event)
        return event

    def annotate(self, seq: int, **fields: Any) -> None:
        fields = redact.deep(fields)            # the webhook's and the ripple's outcomes quote their URL's errors
        with self._write_lock:
            with self._lock:
                event = self._events.get(seq)
                if event is None:
                    return
                event.update(fields)
                line = _line({"patch": seq, "set": fields})
            self._append(line, sync=False)

    def scrub(self, clean: Callable[[dict], dict], stale: Optional[Callable[[bytes], bool]] = None) -> bool:
        """Forgetting: every event replaced by clean(event), the file rewritten whole (no patch lines, no dropped
        events) when one changed or its bytes still hold what stale finds. True when either changed."""
        with self._write_lock:
            with self._lock:
                rewrite = False
                for event in self._events.values():
                    new = clean(event)
                    if new != event:
                        event.clear()
                        event.update(new)
                        rewrite = True
                kept = [clean(line) for line in self._unreadable]      # a text too (the scrub's clean takes one)
                rewrite = rewrite or kept != self._unreadable
                self._unreadable = kept
            if not rewrite and self.path is not None and stale is not None:
                with contextlib.suppress(OSError):
                    rewrite = stale(private.read_bytes(self.path))
            if rewrite and self.path is not None:
                self._compact()
        return rewrite

    def _tell(self, event: dict) -> None:
        for listener in list(self._listeners):
            with contextlib.suppress(Exception):     # a listener never fails the emitter
                listener(event)

    def list(self, limit: int = 100, type_: Optional[str] = None) -> list:
        with self._lock:
            picked = (dict(e) for e in reversed(self._events.values())
                      if type_ is None or e.get("type") == type_)
            return list(itertools.islice(picked, max(0, limit)))

    def _add(self, event: dict) -> None:
        """Keep the event; drop the oldest of its kind beyond `keep`. The caller holds the lock."""
        seq = int(event["seq"])
        kind = str(event.get("type")) not in ROUTINE
        self._events[seq] = event
        kept = self._kept[kind]
        kept.append(seq)
        while len(kept) > self.keep:
            self._events.pop(kept.popleft(), None)
        if kind:
            self._last_mattering = max(self._last_mattering, seq)

    def _append(self, line: bytes, sync: bool) -> None:
        """One whole line at the end of the file, or the file rewritten if it grew too long or a write failed."""
        if self._rewrite or self._lines >= 2 * len(self._events) + len(self._unreadable) + COMPACT_SLACK:
            self._compact()
            return
        try:
            private.make_dir(self.path.parent)
            with open(private.open_append(self.path), "ab") as fh:     # buffered: a short write is carried on
                fh.write(line)
                fh.flush()
                if sync:
                    os.fsync(fh.fileno())
        except OSError as exc:
            self._failed(exc)
            return
        self._lines += 1
        self.write_error = None

    def _compact(self) -> None:
        with self._lock:
            raw = "".join(line + "\n" for line in self._unreadable).encode("utf-8") + \
                b"".join(_line(e) for e in self._events.values())
            count = len(self._events) + len(self._unreadable)
        try:
            private.write_text_atomic(self.path, raw.decode("utf-8"))
        except OSError as exc:
            self._failed(exc)
            return
        self._lines, self._rewrite, self.write_error = count, False, None

    def _failed(self, exc: OSError) -> None:
        self._rewrite = True            # the file may now lack events, or end in a torn line
        self.write_error = (f"the event log {self.path} could not be written ({exc}); "
                            "events are kept in memory")

    def _load(self) -> None:
        legacy = self.path.with_name(LEGACY_NAME)
        if os.path.lexists(self.path):
            if self._read_lines():
                self._compact()
        elif legacy != self.path and legacy.exists():
            loaded = private.read_or_set_aside(legacy, "events")
            self._take(loaded.get("events") if isinstance(loaded, dict) else None)
            if self._events:
                self._compact()
                if not self._rewrite:
                    legacy.unlink(missing_ok=True)
                    log.info("the event log moved from %s to %s (appended, not rewritten per event)",
                             legacy.name, self.path.name)

    def _read_lines(self) -> bool:
        """Replay the file; True when it should be rewritten (a torn or bad line, or lines to spare)."""
        try:
            raw = private.read_bytes(self.path)          # never through a link: a link is moved aside
        except OSError as exc:
            aside = private.aside(self.path)
            self._write_error = (f"the event log {self.path} could not be read ({exc}); moved it aside to {aside} "
                                 "and started clean")     # on /status until the next write lands
            log.error(self._write_error)
            with contextlib.suppress(OSError):
                os.replace(self.path, aside)
            return False
        *lines, torn = raw.split(b"\n")             # torn: what follows the last newline, b"" if none is torn
        torn = torn.strip()
        self._unreadable = [line.decode("utf-8", "replace") for line in lines
                            if line.strip() and not self._replay(line)]
        if torn and not self._replay(torn):
            log.warning("the event log %s ended in a torn line (a crash mid-write); it was skipped", self.path)
        if self._unreadable:
            log.warning("the event log %s held %d unreadable line(s); they were skipped, and are kept in the file "
                        "as they were: fix or delete them", self.path, len(self._unreadable))
        self._lines = len(lines) + (1 if torn else 0)
        return bool(torn) or self._lines > len(self._events) + len(self._unreadable)

    def _replay(self, raw_line: bytes) -> bool:
        try:
            item = json.loads(raw_line.decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            return False
        if not isinstance(item, dict):
            return False
        if "patch" in item:
            event = self._events.get(item.get("patch"))
            if not isinstance(item.get("set"), dict) or not _sound(item["set"]):
                return False
            if event is not None:
                event.update(item["set"])
            return True
        if isinstance(item.get("events"), list):     # a whole legacy document
            self._take(item["events"])
            return True
        if isinstance(item.get("type"), str) and isinstance(item.get("seq"), int) and _sound(item, "at"):
            self._take([item])
            return True
        return False

    def _take(self, events: Optional[list]) -> None:
        for e in sorted((e for e in events or [] if isinstance(e, dict) and isinstance(e.get("seq"), int)
                         and _sound(e, "at")),
                        key=lambda e: e["seq"]):
            if e["seq"] not in self._events:
                self._add(e)


_NUMBERS = {"at": (int, float), "last_at": (int, float), "count": int}     # what the log and the views compute with


def _sound(fields: dict, *needed: str) -> bool:
    """The times and the burst count a line carries are numbers (a hand edit may say otherwise); `needed` present."""
    return all(k in fields for k in needed) and all(
        isinstance(fields[k], kind) and not isinstance(fields[k], bool) for k, kind in _NUMBERS.items() if k in fields)


def _line(item: dict) -> bytes:
    return (private.encode(item) + "\n").encode("utf-8")
