"""Forgetting reaches the rest of the state folder: the events, the state, the voice card, the logs.

The packets are scrubbed field by field (scrub.py); every other file under the state folder is scrubbed of
the same texts, in every form (scrub.forms): the event log and the state through their owners (so what
they hold in memory goes too, and the next write does not bring the text back), any other JSON file
string by string, and any other file (a log) byte by byte. A file that holds none of the texts is not
rewritten.
"""
from __future__ import annotations

import json
import logging
import os
import threading
from pathlib import Path
from typing import Any, Callable

from hippocampus.store import jsonfile
from hippocampus.store.packets import FOLDER

log = logging.getLogger("hippocampus.replay")

PURGED = "[purged]"


def scrubbed(value: str, whole: set, patterns: list) -> str:
    """One string with a purged text (whole, or any of its patterns inside it) replaced."""
    if value in whole or " ".join(value.split()) in whole:
        return PURGED
    for p in patterns:
        if p in value:
            value = value.replace(p, PURGED)
    return value


def cleaner(texts: set, patterns: list) -> Callable[[Any], Any]:
    """A function giving a JSON-like value back with the texts replaced (a new value; the old untouched)."""
    whole = set(texts) | {" ".join(t.split()) for t in texts}

    def clean(value: Any) -> Any:
        if isinstance(value, str):
            return scrubbed(value, whole, patterns)
        if isinstance(value, dict):
            return {k: clean(v) for k, v in value.items()}
        if isinstance(value, list):
            return [clean(v) for v in value]
        return value
    return clean


def holds(raw: bytes, patterns: list) -> bool:
    return any(p.encode("utf-8") in raw for p in patterns)


def scrub_folder(ctx, texts: set, patterns: list) -> list:
    """Every file under the state folder but the packets: the names of those that held a text (changed)."""
    if not texts or not patterns:
        return []
    folder = Path(ctx.cfg.state_dir)
    clean = cleaner(texts, patterns)
    changed = []
    state_path = getattr(ctx.state, "path", None)
    events_path = getattr(ctx.events, "path", None)
    if state_path is not None and _scrub_state(ctx.state, clean, patterns):
        changed.append(Path(state_path).name)
    if events_path is not None and ctx.events.scrub(clean, lambda raw: holds(raw, patterns)):
        changed.append(Path(events_path).name)
    owned = {Path(p) for p in (state_path, events_path) if p is not None}
    voice_lock = getattr(ctx.voice, "_lock", None) if ctx.voice is not None else None
    for path in _files(folder):
        if path in owned or path.parent.name == FOLDER and path.suffix == ".json" and path.parent.parent == folder:
            continue                   # the state and the events are done above, the packets by scrub.py
        lock = voice_lock if ctx.voice is not None and path == Path(ctx.voice.path) else None
        if _scrub_file(path, clean, patterns, lock):
            changed.append(path.relative_to(folder).as_posix())
    return changed


def _files(folder: Path) -> list:
    out = []
    for root, _, names in os.walk(folder):                # symlinks are not followed
        out += [Path(root) / n for n in names if not (Path(root) / n).is_symlink()]
    return out


def _scrub_state(state, clean, patterns: list) -> bool:
    """The state's keys that hold a text, changed in one write; the file written again if it still holds one
    (a key this version no longer keeps)."""
    keys = [k for k, v in state.snapshot().items() if clean(v) != v]
    if keys:
        state.mutate_many(**{k: clean for k in keys})
        return True
    try:
        stale = holds(Path(state.path).read_bytes(), patterns)
    except OSError:
        return False
    if stale:
        state.save()
    return stale


def _scrub_file(path: Path, clean, patterns: list, lock=None) -> bool:
    try:
        raw = path.read_bytes()
    except OSError:
        return False
    if not holds(raw, patterns):
        return False
    with lock or threading.Lock():
        try:
            raw = path.read_bytes()
            try:
                data = json.loads(raw.decode("utf-8"))
            except (ValueError, UnicodeDecodeError):
                data = None
            if isinstance(data, (dict, list)):
                st = path.stat()
                jsonfile.write_atomic(path, clean(data))
                os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
            else:
                for p in patterns:
                    raw = raw.replace(p.encode("utf-8"), PURGED.encode("utf-8"))
                with open(path, "r+b") as fh:         # in place: a log's writer keeps appending to it
                    fh.write(raw)
                    fh.truncate()
            return True
        except OSError as exc:
            log.error("the text of a purged memory could not be removed from %s (%s)", path, exc)
            return False
