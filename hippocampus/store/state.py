"""The durable state: one JSON file written atomically after every change that matters. A corrupt file is
moved aside and the service starts clean; a write that fails keeps the state in memory and says so.
"""
from __future__ import annotations

import copy
import logging
import math
import threading
from pathlib import Path
from typing import Any, Optional

from hippocampus.store import private

log = logging.getLogger(__name__)

DEFAULTS: dict = {
    "last_sleep": None,          # the last sleep report (any outcome)
    "last_sleep_ok_at": None,    # when the last successful sleep finished (not one the budget stopped): /metrics
    "last_slept_at": None,       # when the last sleep that did not fail finished (budget too): bedtime counts from here
    "first_check_at": None,      # the first check on a store that never slept: its first bedtime
    "memory_slept_at": None,     # the newest sleep on this Memory by any copy (claims.post_slept): bedtime too
    "last_tend": None,
    "last_check": None,
    "history": [],               # rows {kind: sleep|tend, ...}, newest last
    "brief_misses": 0,
    "brief_request": None,       # {asked_at, for_sleep_due_at, intent_id, answered, nudges}
    "brief_times": {},           # brief id -> created_at
    "parked_briefs": [],
    "retiring_briefs": {},       # {brief_id, ids}: the older briefs a quiet sleep on brief_id answers
    "review_notes": {},          # cluster id -> near-term note id
    "chain_catch_up": {},        # cluster id -> bool
    "chain_keep_shorts": {},     # cluster id -> True: its sleep passed over a promoted pile; its landing ages nothing out
    "chain_keep_brief": {},      # cluster id -> True: the budget stopped its sleep; its landing leaves the brief open
    "ended_chains": [],          # cluster ids whose chain_ended was emitted
    "closing": {},               # cluster id -> progress of a cull in flight
    "chain_unusable": {},        # cluster id -> redrafts in a row the model answered unusably (tend.UNUSABLE_TRIES)
    "gave_up": None,             # the last chain closed for that, {cluster_id, why, at, said, ...}: till the next sleep
    "submitting": None,          # a draft being submitted: {draft_id, brief_id, ...}
    "lifecycle": {},
    "redrafts_waiting_since": None,
}
HISTORY_KEEP = 40
NUMBER = (int, float)
# the type each key holds (null is absent); a hand-edited value of another type is read as absent, and said
KINDS = {**{k: type(v) for k, v in DEFAULTS.items() if v is not None},
         **dict.fromkeys(("last_sleep_ok_at", "last_slept_at", "first_check_at", "memory_slept_at",
                          "redrafts_waiting_since"), NUMBER),
         **dict.fromkeys(("last_sleep", "last_tend", "last_check", "brief_request", "submitting", "gave_up"), dict)}
# each entry of these is a mapping, or an id: one that is not is dropped, and said
ENTRIES = {"history": (dict, "a mapping"), "closing": (dict, "a mapping"), "parked_briefs": (str, "an id"),
           "ended_chains": (str, "an id")}
# a cull record (cycle/tend.py) needs these; the others it may hold are read with a default. One without them,
# or with a value of another kind, would fail every tend and check: it is dropped, and said
_IDS = (lambda v: isinstance(v, list) and all(isinstance(i, str) for i in v), "a list of ids")
_FLAG = (lambda v: isinstance(v, bool), "true/false")
_COUNT = (lambda v: _is(v, int), "a whole number")
_ID = (lambda v: isinstance(v, str), "an id")
CULL_NEEDS = {"cluster_id": (lambda v: isinstance(v, str), "its own chain's id"), "drafts": _IDS, "closed": _IDS,
              "last_draft_id": _ID, "consumed": _FLAG, "retired": _FLAG,
              "note_deleted": _FLAG, "catch_up": _FLAG, "attempts": _COUNT, "landed": _COUNT, "denied": _COUNT}
_BRIEF = (lambda v: v is None or isinstance(v, str), "an id or null")
CULL_MAY = {"brief_id": _BRIEF, "retiring": _IDS, "verbatim": _IDS, "why": (lambda v: isinstance(v, str), "words")}
# the records a step in flight keeps, and what each needs (and may hold): one without it is read as none, and said
RECORDS = {"submitting": ({"draft_id": _ID, "cluster_id": _ID, "operations": _COUNT}, {"brief_id": _BRIEF}),
           "retiring_briefs": ({"brief_id": _ID, "ids": _IDS}, {})}      # cycle/sleep.py, cycle/briefs.py
# the reports /status tells in words: a time (at, *_at) that is no number, or words that are no text, would fail
# every /status, so such a report is read as absent, and said
REPORTS = ("last_sleep", "last_tend", "last_check", "gave_up")
REPORT_WORDS = ("error", "interrupted", "status", "said", "why")
REPORT_KINDS = {**dict.fromkeys(("kinds", "tokens", "tidy", "hints", "guard", "budget", "write", "other", "withdrawn",
                                 "sleep"), dict),
                **dict.fromkeys(("model_failures", "kept_back", "resubmitted", "ended", "closed", "deferred",
                                 "under_review"), list)}     # cycle/reports.py's parts: each a mapping or a list
_TYPE_WORDS = {dict: "a mapping", list: "a list", int: "a whole number", NUMBER: "a number", str: "a text",
               bool: "true/false", float: "a number"}
# what /status, /metrics and /history show (published to the board after every write)
SHOWN = ("brief_request", "last_check", "last_sleep_ok_at", "last_slept_at", "first_check_at", "memory_slept_at",
         "brief_misses", "last_sleep", "last_tend", "redrafts_waiting_since", "history", "gave_up")


def history_with(row: dict):
    """The change that adds a history row, keeping the newest HISTORY_KEEP of its kind (for mutate_many)."""
    def add(rows: list) -> list:
        rows.append(row)
        same = [r for r in rows if r.get("kind") == row.get("kind")]
        drop = {id(r) for r in same[:-HISTORY_KEEP]}
        return [r for r in rows if id(r) not in drop]
    return add


class State:
    publish = staticmethod(lambda view: None)   # the board's (Context.wire): view() after every write

    def __init__(self, path: Optional[Path]):
        self.path = Path(path) if path else None
        self._lock = threading.RLock()          # readers and writers of the data: held briefly
        self._write_lock = threading.Lock()     # one disk write at a time, never held by a reader
        self.write_error: Optional[str] = None
        self.read_error: Optional[str] = None    # a hand-edited value of the wrong type, read as absent
        self._data = copy.deepcopy(DEFAULTS)
        if self.path:
            loaded = private.read_or_set_aside(self.path, "state")
            if isinstance(loaded, dict):
                wrong = [k for k, v in loaded.items() if k in KINDS and v is not None and not _is(v, KINDS[k])]
                self._data.update((k, v) for k, v in loaded.items()
                                  if k in DEFAULTS and k not in wrong and v is not None)
                said = [f"{k!r} holds {_kind_of(loaded[k])} where {_TYPE_WORDS[KINDS[k]]} "
                        "belongs, read as absent" for k in wrong]
                for k, (kind, words) in ENTRIES.items():
                    said += self._entries_only(k, kind, words)
                said += self._sound_culls() + self._sound_reports()
                for k, (needs, may) in RECORDS.items():
                    if (why := _unsound(self._data[k], needs, may)) is not None:
                        self._data[k] = copy.deepcopy(DEFAULTS[k])
                        said.append(f"{k!r} holds a record whose {why}, read as none")
                if said:
                    self._said_wrong(loaded, said)
            elif loaded is not None:
                log.error("the state file %s did not hold a mapping; starting clean", self.path)

    def _entries_only(self, key: str, kind: type, words: str) -> list:
        """Drop the entries of `key` that are not of `kind` (`words` says what they should be); what was dropped,
        in words."""
        value = self._data[key]
        entries = value.values() if isinstance(value, dict) else value
        bad = sum(1 for e in entries if not isinstance(e, kind))
        if not bad:
            return []
        self._data[key] = ({k: v for k, v in value.items() if isinstance(v, kind)} if isinstance(value, dict)
                           else [v for v in value if isinstance(v, kind)])
        return [f"{key!r} holds {bad} entr{'y' if bad == 1 else 'ies'} that {'is' if bad == 1 else 'are'} not "
                f"{words}, dropped"]

    def _sound_culls(self) -> list:
        """Drop the cull records that lack what a cull needs or hold a value of another kind; each, in words."""
        said, kept = [], {}
        for cid, record in self._data["closing"].items():
            why = _unsound(record, CULL_NEEDS, CULL_MAY)
            if why is None and record["cluster_id"] != cid:
                why = f"cluster_id is {str(record['cluster_id'])[:64]!r}, another chain's"
            if why:
                said.append(f"'closing' holds a cull record for chain {str(cid)[:64]!r} whose {why}, dropped")
            else:
                kept[cid] = record
        self._data["closing"] = kept        # a new mapping: the file as it was is kept beside it as loaded
        return said

    def _sound_reports(self) -> list:
        """Read as absent the REPORTS whose parts are of another kind, and drop such history rows; each, in words."""
        said = []
        for key in REPORTS:
            if bad := _odd_parts(self._data[key] or {}):
                self._data[key] = None
                said.append(f"{key!r} holds a report whose {', '.join(bad[:3])}, read as absent")
        rows = [(row, _odd_parts(row)) for row in self._data["history"]]
        if odd := [bad for _, bad in rows if bad]:
            self._data["history"] = [row for row, bad in rows if not bad]
            said.append(f"'history' holds {len(odd)} row{'s' if len(odd) > 1 else ''} whose parts are of another "
                        f"kind ({odd[0][0]}), dropped")
        return said

    def _said_wrong(self, loaded: dict, said: list) -> None:
        """The file as it was kept beside it (the next write replaces the values), and what was wrong named."""
        keys = "; ".join(said)
        copy_at = private.aside(self.path)
        try:
            private.write_atomic(copy_at, loaded)
            kept = (f"the file as it was is kept at {copy_at}: fix the value there and copy it back while the "
                    "service is stopped, or restart the service to clear this note")
        except OSError as exc:
            kept = f"a copy of the file as it was could not be kept ({exc}), and the next write replaces the value"
        self.read_error = f"the state file {self.path}: {keys}; the rest of the file is used; {kept}"
        log.error(self.read_error)

    def get(self, key: str, default: Any = None) -> Any:
        with self._lock:
            return copy.deepcopy(self._data.get(key, default))

    def set(self, **values: Any) -> None:
        _known(values)
        with self._lock:
            self._data.update(values)
        self.save()

    def mutate(self, key: str, fn) -> None:
        """Apply fn to a copy of the value and store what it returns; saved."""
        self.mutate_many(**{key: fn})

    def mutate_many(self, **fns) -> None:
        """mutate() for several keys in one write: a crash keeps all of the changes or none of them."""
        _known(fns)
        with self._lock:
            for k, fn in fns.items():
                self._data[k] = fn(copy.deepcopy(self._data[k]))
        self.save()

    def add_history(self, row: dict) -> None:
        self.mutate("history", history_with(row))

    def snapshot(self) -> dict:
        return self.pick(*DEFAULTS)

    def pick(self, *keys: str) -> dict:
        """A copy of just these keys: cheaper than snapshot() once history and the lists have grown."""
        with self._lock:
            return {k: copy.deepcopy(self._data.get(k)) for k in keys}

    def save(self) -> None:
        """The data lock is held only to encode, never across the fsync; then the view is published (in the order
        of the writes: the last one published is the newest)."""
        with self._write_lock:
            if self.path:
                with self._lock:
                    raw = private.encode(self._data)
                try:
                    private.write_text_atomic(self.path, raw)
                    if self.write_error is not None:
                        log.info("the state file %s is written again", self.path)
                    self.write_error = None
                except OSError as exc:
                    error = (f"the state file {self.path} could not be written ({exc}); "
                             "the service keeps running but a restart would lose recent progress: "
                             "free disk space or fix the folder's permissions")
                    if error != self.write_error:       # said once per change, not on every write
                        log.error(error)
                    self.write_error = error
            self.publish(self.view())

    def view(self) -> dict:
        """What the status shows of the state: the SHOWN keys and the last write's error."""
        return {**self.pick(*SHOWN), "write_error": self.write_error or self.read_error}


def _is(value: Any, kind) -> bool:
    """`value` is of `kind` (true/false is no number; NaN and Infinity, which json reads, are no time or count)."""
    return (isinstance(value, kind) and not (isinstance(value, bool) and kind is not bool)
            and not (isinstance(value, float) and not math.isfinite(value)))


def _kind_of(value: Any) -> str:
    """What `value` is, in words."""
    if isinstance(value, float) and not math.isfinite(value):
        return f"a number that is not finite ({value})"
    return _TYPE_WORDS.get(type(value), "a value")


def _odd_parts(report: dict) -> list:
    """The parts of a report (or history row) of another kind than _report_part says, in words."""
    return [f"{k} is {_kind_of(v)} where {belongs}"
            for k, v in report.items() if v is not None and (belongs := _report_part(k, v))]


def _report_part(key: str, value: Any) -> Optional[str]:
    """What belongs under `key` of a report ("a time belongs"), when `value` is not it; else None."""
    if (key == "at" or key.endswith("_at")) and not _is(value, NUMBER):
        return "a time belongs"
    if key in REPORT_WORDS and not isinstance(value, str):
        return "words belong"
    kind = REPORT_KINDS.get(key)
    return f"{_TYPE_WORDS[kind]} belongs" if kind and not isinstance(value, kind) else None


def _unsound(record: Optional[dict], needs: dict, may: dict) -> Optional[str]:
    """What is wrong with a record that lacks a key of `needs` or holds a value of another kind (up to three, in
    words), or None: sound, or no record."""
    if not record:
        return None
    bad = [f"{k} is missing" for k in needs if k not in record]
    bad += [f"{k} is {_kind_of(record[k])} where {words} belongs"
            for k, (ok, words) in {**needs, **may}.items() if k in record and not ok(record[k])]
    return ", ".join(bad[:3]) or None


def _known(keys) -> None:
    for k in keys:
        if k not in DEFAULTS:
            raise KeyError(f"unknown state key {k!r}")
