"""Forgetting: a purge leaves no copy of the content on this machine.

A purged memory's text and its fragments' text (found through Memory's drafts) are removed in every form a
file holds them from the replay packets and every other file under the state folder (the event log and the
state through their owners, so the next write does not bring the text back). The purges are this service's
own and every tombstone Memory lists, so one made in Memory itself or while this service was down goes too.
What this process keeps in memory is reached by the same scrub: every holder registered on the service's context
(hold(): the kept replay runs and their results) is handed the Removal once the files are clean, and its copies
of packets are sources of the texts to remove as well as the files.
"""
from __future__ import annotations

import contextlib
import fnmatch
import json
import logging
import os
import threading
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Optional

from hippocampus.memory import MemoryError_
from hippocampus.drafting.prompt import FRAGMENT_CHARS, VIA_CHARS
from hippocampus.store import private
from hippocampus.store.capture import store_for
from hippocampus.store.packets import FOLDER

log = logging.getLogger(__name__)

PURGED = "[purged]"
MIN_SUBSTRING = 4            # shorter forms are only replaced where they are a whole field
DRAFTS_READ = 1000
TOMBSTONES_TIMEOUT = 5.0
ID_KEYS = frozenset({"id", "draft_id", "cluster_id", "brief_id", "redraft_of", "marker", "target_core_id",
                     "source_short_ids", "long_term_id", "stage", "finish_reason", "purges", "target_op",
                     "kind", "stamp", "served", "ts", "version"})
NOTE = "the text of a purged memory and of its fragments was removed here; ids are kept"
SHAPE_ERRORS = (AttributeError, TypeError, KeyError, IndexError)     # a packet edited by hand out of shape
DAMAGED = "edited out of shape: the scrub cannot read it, fix it or delete it"


class Scrubs:
    """What this process remembers of its scrubs: one per service, on its Context (ctx.scrubs), so a restart (a
    new context) scrubs the purges Memory lists once again."""

    def __init__(self) -> None:
        self.lock = threading.RLock()     # one scrub at a time (the tick's and the quality reader's), and `done`
        self.done: set = set()            # the purged ids already scrubbed here
        self.no_route_said = False        # Memory has no /tombstones, and the log said so
        self.holders = weakref.WeakSet()  # what this process keeps (packets() -> list, forget(Removal) -> int)
        self.refused: tuple = ()          # the files whose rewrite failed at the last scrub (said once per change)


@dataclass(frozen=True)
class Removal:
    """One scrub: the purged ids, their texts and fragments, as a holder applies them to what it keeps."""
    ids: frozenset
    texts: frozenset
    fragments: frozenset
    patterns: tuple
    now: float
    core_chars: int

    def clean(self, value: Any) -> Any:
        """A new JSON-like value with the texts replaced (ids kept)."""
        return cleaner(set(self.texts), list(self.patterns), skip=ID_KEYS)(value)

    def packet(self, packet: dict) -> bool:
        """A kept copy of a packet scrubbed in place, as its file is; True when anything changed."""
        return scrub_packet(packet, set(self.ids), set(self.texts), set(self.fragments), self.now, self.core_chars)


def hold(ctx, holder) -> None:
    """Register something this process keeps (packets() -> its packet copies, forget(Removal) -> how many it
    changed) to be reached by every scrub of the context's state folder; held weakly."""
    with ctx.scrubs.lock:
        ctx.scrubs.holders.add(holder)


def forget(ctx, purged: Iterable[str]) -> int:
    """After this service's purge: scrub the files of these ids and of any still owed. Returns the packets changed."""
    def scrub() -> int:
        store = store_for(ctx.cfg)
        ids = list(dict.fromkeys(store.owed() + [i for i in purged or [] if i]))
        return _scrub(ctx, store, ids) if ids else 0
    # the purge itself has landed; say loudly that the copy has not gone
    return _logged(scrub, 0, "could not scrub the replay packets after a purge")


def forget_tombstones(ctx, drafts: Optional[list] = None) -> int:
    """Scrub the files of every purge Memory lists not scrubbed here yet (drafts: Memory's, if just read)."""
    def scrub() -> int:
        with ctx.scrubs.lock:
            done = set(ctx.scrubs.done)
        ids = [i for i in dict.fromkeys(tombstone_ids(ctx)) if i not in done]
        return _scrub(ctx, store_for(ctx.cfg), ids, drafts) if ids else 0
    # say loudly that the copy has not gone; the next pass tries again
    return _logged(scrub, 0, "could not scrub the files of the purges Memory lists")


def _logged(call: Callable[[], Any], default: Any, message: str) -> Any:
    """call(), or default once `message` is logged with the error: a scrub, a holder never fails its caller."""
    try:
        return call()
    except Exception:  # noqa: BLE001 - what did not go is said loudly, the caller goes on
        log.exception(message)
        return default


def _scrub(ctx, store, ids: list, drafts: Optional[list] = None) -> int:
    scrubs = ctx.scrubs
    with scrubs.lock:
        holders = list(scrubs.holders)
        kept = [p for h in holders        # one holder never stops the scrub of the files
                for p in _logged(lambda: list(h.packets()), [], "could not read the packets a replay holder keeps")]
        if not store.paths() and not kept:
            scrubs.done.update(ids)      # no packet, so no copy of a text to find it by
            store.set_owed([])           # nor one left to owe a scrub: the file would say so for good
            _say_refused(ctx, [], len(ids))
            return 0
        readable = True
        if drafts is None:
            try:
                drafts = ctx.memory.drafts(None, limit=DRAFTS_READ)
            except MemoryError_ as exc:
                log.warning("Memory's drafts could not be read to scrub the replay packets (%s); the scrub of "
                            "%d purged id(s) is finished on the next tick", exc, len(ids))
                drafts, readable = [], False
        core_chars = ctx.cfg.sleep.core_chars
        packets = list(store.packets())
        texts, fragments = what_to_remove([p for _, p in packets] + kept, set(ids), drafts)
        patterns = _patterns(texts, core_chars)
        others, failed = scrub_folder(ctx, texts, patterns)    # before the packets: texts are read there
        if failed:          # the packets say what to remove: kept as they are until those files are clean
            readable, packets = False, []
        changed = 0
        for path, packet in packets:
            try:
                hit = scrub_packet(packet, set(ids), texts, fragments, ctx.clock.now(), core_chars)
            except SHAPE_ERRORS:        # skipped: owed while it may hold a text (none known: it may), till fixed
                if not patterns or _file_holds(path, patterns):
                    readable = False
                    failed.append(f"{FOLDER}/{path.name} ({DAMAGED})")
                continue
            if hit:
                why = store.rewrite(path, packet)
                if why is None:
                    changed += 1
                else:
                    readable = False        # the text is still in that file: owed, and tried again next time
                    failed.append(f"{FOLDER}/{path.name} ({why})")
        _say_refused(ctx, failed, len(ids))
        removal = Removal(ids=frozenset(ids), texts=frozenset(texts), fragments=frozenset(fragments),
                          patterns=tuple(patterns), now=ctx.clock.now(), core_chars=core_chars)
        # after the files: a copy taken now is clean
        held = sum(_logged(lambda: int(h.forget(removal) or 0), 0, "the text of a purged memory could not be removed "
                           "from the replay runs kept in memory") for h in holders)
        if held:
            others.append(f"{held} kept replay run(s)")
        owed = set(store.owed())
        store.set_owed(sorted(owed | set(ids) if not readable else owed - set(ids)))
        if readable:
            scrubs.done.update(ids)
        if changed or others:
            log.info("removed the text of %d purged memory(ies) from %d replay packet(s)%s", len(ids), changed,
                     f" and from {', '.join(others)}" if others else "")
        return changed


def _say_refused(ctx, failed: list, count: int) -> None:
    """The files still holding a purged text, said in the log when they change (and when none is left), and
    shown on /status (the board's "scrub") while they last."""
    scrubs = ctx.scrubs
    if tuple(failed) == scrubs.refused:
        return
    before, scrubs.refused = scrubs.refused, tuple(failed)
    if not failed:
        log.info("the text of the purged memories is gone now from %s", ", ".join(before))
        ctx.publish("scrub", None)
        return
    packets_too = any(not f.startswith(f"{FOLDER}/") for f in failed)
    fix = ": free disk space or fix the folder's permissions" if any(DAMAGED not in f for f in failed) else ""
    said = (f"the text of {count} purged memory(ies) is still in {', '.join(failed)}: "
            f"{'the replay packets keep it too until that is gone, and ' if packets_too else ''}"
            f"the next tick tries again{fix}")
    log.warning(said)
    ctx.publish("scrub", said)


def tombstone_ids(ctx) -> list:
    """The ids Memory says were purged (GET /tombstones: never any content); [] when it cannot say."""
    try:
        body = ctx.memory.request("GET", "/tombstones", timeout=TOMBSTONES_TIMEOUT)
    except MemoryError_ as exc:
        if getattr(exc, "status", None) != 404:
            log.warning("Memory's tombstones could not be read (%s): a purge made in Memory itself is scrubbed "
                        "from the files here on a later pass", exc)
        elif not ctx.scrubs.no_route_said:
            ctx.scrubs.no_route_said = True
            log.info("this Memory lists no tombstones (GET /tombstones answers 404): only the purges this "
                     "service runs are scrubbed from the files under %s", ctx.cfg.state_dir)
        return []
    entries = body.get("entries") if isinstance(body, dict) else None
    return [str(t["id"]) for t in entries or [] if isinstance(t, dict) and t.get("id")]


def what_to_remove(packets: list, ids: set, drafts: list) -> tuple:
    """(texts, fragment ids): the purged memories' texts and their fragments, found through Memory's links."""
    hits: set = set()          # (draft id, op index) of operations that produced or touched a purged id
    fragments: set = set()
    for d in drafts:
        for i, op in enumerate(d.get("operations") or []):
            made = op.get("long_term_id") in ids
            touched = op.get("target_core_id") in ids
            if made or touched:
                hits.add((d.get("id"), op.get("index", i)))
            if made or (touched and op.get("kind") == "attach"):
                fragments.update(op.get("source_short_ids") or [])
    texts: set = set()
    for p in packets:
        with contextlib.suppress(*SHAPE_ERRORS):      # out of shape: skipped (the scrub of its file says so)
            texts |= _texts_of(p, hits, ids, fragments)
    texts.discard(PURGED)
    return {t for t in texts if t.strip()}, fragments


def _texts_of(p: dict, hits: set, ids: set, fragments: set) -> set:
    texts: set = set()
    ops = p.get("operations") or []
    for did, idx in hits:
        if did == p.get("draft_id") and isinstance(idx, int) and 0 <= idx < len(ops):
            texts.update(_strings(ops[idx].get("content"), ops[idx].get("restated_content")))
    for call in p.get("calls") or []:
        for c in call.get("candidates") or []:
            if c.get("id") in ids:
                texts.update(_strings(c.get("content"), c.get("via")))
        for e in call.get("entries") or []:
            if e.get("id") in fragments:
                texts.update(_strings(e.get("content")))
    return texts


def _strings(*values) -> list:
    return [v for v in values if isinstance(v, str)]


def _patterns(texts: set, core_chars: int) -> list:
    """The ways a file can hold these texts (on one line, cut as a prompt cuts them, JSON-escaped), longest first."""
    out: set = set()
    for text in texts:
        one = " ".join(text.split())
        cut = {text, one, one[:FRAGMENT_CHARS], one[:VIA_CHARS], one[:max(1, int(core_chars))]}
        out |= cut | {json.dumps(t)[1:-1] for t in cut} | {json.dumps(t, ensure_ascii=False)[1:-1] for t in cut}
    return sorted((f for f in out if len(f) >= MIN_SUBSTRING), key=len, reverse=True)


def scrub_packet(packet: dict, ids: set, texts: set, fragments: set, now: float, core_chars: int) -> bool:
    """Remove the texts from one packet (in place), noting the purge; True when anything changed."""
    whole = _whole(texts)
    before = json.dumps(packet, sort_keys=True)
    ops = list(packet.get("operations") or [])
    for call in packet.get("calls") or []:
        for e in call.get("entries") or []:
            if e.get("id") in fragments:
                e["content"] = PURGED
        for c in call.get("candidates") or []:
            if c.get("id") in ids:
                c["content"], c["via"] = PURGED, None
        ops += [*(call.get("ops") or []), call.get("denied")]
    for op in (op for op in ops if isinstance(op, dict)):
        if isinstance(op.get("content"), str) and " ".join(op["content"].split()) in whole:
            op["content"] = PURGED
            op.pop("rationale", None)
        if isinstance(op.get("restated_content"), str) and " ".join(op["restated_content"].split()) in whole:
            op["restated_content"] = None
    packet.update(cleaner(texts, _patterns(texts, core_chars), skip=ID_KEYS)(packet))
    if json.dumps(packet, sort_keys=True) == before:
        return False
    packet.setdefault("purges", []).append({"ids": sorted(ids), "at": now, "note": NOTE})
    return True


def _whole(texts) -> set:
    """What a field that is nothing but one of the texts holds: the text as it is, or on one line."""
    return set(texts) | {" ".join(t.split()) for t in texts}


def cleaner(texts: set, patterns: list, skip: frozenset = frozenset()) -> Callable[[Any], Any]:
    """A function giving a new JSON-like value with the texts replaced (what a mapping holds under skip kept)."""
    whole = _whole(texts)

    def clean(value: Any) -> Any:
        if isinstance(value, str):
            if value in whole or " ".join(value.split()) in whole:
                return PURGED
            for p in patterns:
                value = value.replace(p, PURGED)
            return value
        if isinstance(value, dict):
            return {k: v if k in skip else clean(v) for k, v in value.items()}
        if isinstance(value, list):
            return [clean(v) for v in value]
        return value
    return clean


def holds(raw: bytes, patterns: list) -> bool:
    return any(p.encode("utf-8") in raw for p in patterns)


def scrub_folder(ctx, texts: set, patterns: list) -> tuple:
    """Every file under the state folder but the packets: (the names of those that held a text, the names of
    those that still hold it: their rewrite failed)."""
    if not texts or not patterns:
        return [], []
    folder = Path(ctx.cfg.state_dir)
    clean = cleaner(texts, patterns)
    changed, failed = [], []
    owned = (ctx.state.path, ctx.events.path)      # None: kept in memory only
    if owned[0] is not None and _scrub_state(ctx.state, clean, patterns):
        (failed if ctx.state.write_error else changed).append(owned[0].name)
    if owned[1] is not None and ctx.events.scrub(clean, lambda raw: holds(raw, patterns)):
        (failed if ctx.events.write_error else changed).append(owned[1].name)
    paths = [Path(root) / n for root, _, names in os.walk(folder) for n in names]     # symlinks are not followed
    for path in paths:
        if path.is_symlink() or path in owned or path.parent == folder / FOLDER and path.suffix == ".json":
            continue                   # the state and the events are done above, the packets by scrub_packet
        lock = ctx.voice._lock if ctx.voice is not None and path == ctx.voice.path else None
        done = _scrub_file(path, clean, patterns, lock, ours=_ours(path, folder))
        if done is not None:
            name = path.relative_to(folder).as_posix()
            changed.append(name) if done is True else failed.append(f"{name} ({done})")
    return changed, failed


def _ours(path: Path, folder: Path) -> bool:
    """A file this service writes in its state folder (the folder may be shared with other programs)."""
    if path.parent == folder:
        return path.name in private.OURS or any(fnmatch.fnmatchcase(path.name, p) for p in private.OURS_LIKE)
    return folder / FOLDER in path.parents


def _file_holds(path: Path, patterns: list) -> bool:
    try:
        return holds(private.read_bytes(Path(path)), patterns)
    except OSError:
        return False


def _scrub_state(state, clean, patterns: list) -> bool:
    """The state's keys that hold a text, changed in one write; else the file rewritten if it still holds one."""
    keys = [k for k, v in state.snapshot().items() if clean(v) != v]
    if keys:
        state.mutate_many(**{k: clean for k in keys})
        return True
    stale = _file_holds(state.path, patterns)
    if stale:
        state.save()
    return stale


def _scrub_file(path: Path, clean, patterns: list, lock=None, ours: bool = True) -> Any:
    """None: the file held no text (or is another program's binary file: named in the log); True: it was removed;
    else why the rewrite failed (said by the caller, once)."""
    if not _file_holds(path, patterns):
        return None
    with lock or threading.Lock():
        try:
            raw = path.read_bytes()
            try:
                data = json.loads(raw.decode("utf-8"))
            except (ValueError, UnicodeDecodeError):
                data = None
            if isinstance(data, (dict, list)):
                st = path.stat()
                private.write_atomic(path, clean(data))
                os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
            elif not ours and b"\0" in raw:     # another program's binary file: a shorter word breaks it
                log.warning("%s holds the text of a purged memory, but it is another program's binary file (a "
                            "database?), so it was left as it is: remove the text with the program that wrote it, "
                            "or keep that program's files out of this service's state folder", path)
                return None
            else:
                for p in patterns:
                    raw = raw.replace(p.encode("utf-8"), PURGED.encode("utf-8"))
                with open(path, "r+b") as fh:         # in place: a log's writer keeps appending to it
                    fh.write(raw)
                    fh.truncate()
            return True
        except OSError as exc:
            return exc.strerror or str(exc)
