"""Forgetting reaches the packets: a purge leaves no copy of the content on this machine.

When a purge lands, the purged memory's text and its fragments' text are removed from every packet that
holds them, in every form a packet holds them (the field itself, the prompt's one-line and cut forms, the
answer's JSON-escaped form), and from every other file under the state folder (scrub_folder.py: the
events, the state, the voice card, the logs). Which texts: what Memory's own scrub touches (an operation
whose long_term_id or target is a purged id: its drafted content and rewording, and for one that became or
fed the memory, its fragments), and any core shown under a purged id. The packet keeps its ids and a note
of the purge. The operations' texts come from the packets, the links from Memory's drafts; when Memory
cannot be read the ids are kept as owed and the scrub is finished on the next purge step (every tick).

Which purges: those this service's tidy ran (forget, on the tick), and every tombstone Memory lists (GET
/tombstones, forget_tombstones, on the quality reader's pass, which reads Memory's drafts anyway), so a
purge made in Memory itself (POST /long/{id}/purge, the MCP purge_memory_now) or while this service was
down is scrubbed too. The ids already scrubbed are remembered for the process: an idle pass reads the
tombstones and touches nothing. After a restart the first pass goes over them all once; a file already
scrubbed holds nothing to change, so nothing is rewritten.
"""
from __future__ import annotations

import json
import logging
import threading
from typing import Iterable, Optional

from hippocampus.memory import MemoryError_
from hippocampus.drafting.prompt import FRAGMENT_CHARS, VIA_CHARS
from hippocampus.store.capture import store_for
from hippocampus.store.scrub_folder import PURGED, scrub_folder, scrubbed

log = logging.getLogger("hippocampus.replay")

MIN_SUBSTRING = 4            # shorter forms are only replaced where they are a whole field
DRAFTS_READ = 1000
TOMBSTONES_TIMEOUT = 5.0
ID_KEYS = frozenset({"id", "draft_id", "cluster_id", "brief_id", "redraft_of", "marker", "target_core_id",
                     "source_short_ids", "long_term_id", "stage", "finish_reason", "purges", "target_op",
                     "kind", "stamp", "served", "ts", "version"})
NOTE = "the text of a purged memory and of its fragments was removed here; ids are kept"

_lock = threading.RLock()    # one scrub at a time (the tick's and the quality reader's), and the ids done
_done: dict = {}             # state folder -> the purged ids already scrubbed there (this process)
_no_route: set = set()       # state folders whose Memory has no /tombstones (said once)


def forget(ctx, purged: Iterable[str]) -> int:
    """The hook after this service's purge (every tick): scrub the files of these ids and of any still owed.
    Returns the packets changed. Never raises."""
    try:
        store = store_for(ctx.cfg)
        ids = list(dict.fromkeys(store.owed() + [i for i in purged or [] if i]))
        return _scrub(ctx, store, ids) if ids else 0
    except Exception:  # noqa: BLE001 - the purge itself has landed; say loudly that the copy has not gone
        log.exception("could not scrub the replay packets after a purge")
        return 0


def forget_tombstones(ctx, drafts: Optional[list] = None) -> int:
    """The quality reader's pass: scrub the files of every purge Memory lists (GET /tombstones) that was not
    scrubbed here yet, however it was made. drafts: Memory's, when the caller has just read them. An idle
    pass is one read of the tombstones and touches no file. Returns the packets changed. Never raises."""
    try:
        key = str(ctx.cfg.state_dir)
        with _lock:
            done = set(_done.get(key, ()))
        ids = [i for i in dict.fromkeys(tombstone_ids(ctx)) if i not in done]
        return _scrub(ctx, store_for(ctx.cfg), ids, drafts) if ids else 0
    except Exception:  # noqa: BLE001 - say loudly that the copy has not gone; the next pass tries again
        log.exception("could not scrub the files of the purges Memory lists")
        return 0


def _scrub(ctx, store, ids: list, drafts: Optional[list] = None) -> int:
    key = str(ctx.cfg.state_dir)
    with _lock:
        if not store.paths():
            _remember(key, ids)          # no packet, so no copy of a text to find it by
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
        texts, fragments = what_to_remove([p for _, p in packets], set(ids), drafts)
        patterns = sorted({f for t in texts for f in forms(t, core_chars)}, key=len, reverse=True)
        others = scrub_folder(ctx, texts, patterns)        # before the packets: they are where the texts are read
        changed = 0
        for path, packet in packets:
            if scrub_packet(packet, set(ids), texts, fragments, ctx.clock.now(), core_chars) and \
                    store.rewrite(path, packet):
                changed += 1
        owed = set(store.owed())
        store.set_owed(sorted(owed | set(ids) if not readable else owed - set(ids)))
        if readable:
            _remember(key, ids)
        if changed or others:
            log.info("removed the text of %d purged memory(ies) from %d replay packet(s)%s", len(ids), changed,
                     f" and from {', '.join(others)}" if others else "")
        return changed


def tombstone_ids(ctx) -> list:
    """The ids Memory says were purged (GET /tombstones: never any content); [] when it cannot say."""
    key = str(ctx.cfg.state_dir)
    try:
        body = ctx.memory.request("GET", "/tombstones", timeout=TOMBSTONES_TIMEOUT)
    except MemoryError_ as exc:
        if getattr(exc, "status", None) == 404:
            if key not in _no_route:
                _no_route.add(key)
                log.info("this Memory lists no tombstones (GET /tombstones answers 404): only the purges this "
                         "service runs are scrubbed from the files under %s", key)
            return []
        log.warning("Memory's tombstones could not be read (%s): a purge made in Memory itself is scrubbed "
                    "from the files here on a later pass", exc)
        return []
    entries = body.get("entries") if isinstance(body, dict) else None
    return [str(t["id"]) for t in entries or [] if isinstance(t, dict) and t.get("id")]


def _remember(key: str, ids: list) -> None:
    with _lock:
        _done.setdefault(key, set()).update(ids)


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
        ops = p.get("operations") or []
        for did, idx in hits:
            if did == p.get("draft_id") and isinstance(idx, int) and 0 <= idx < len(ops):
                texts.update(_op_texts(ops[idx]))
        for call in p.get("calls") or []:
            for c in call.get("candidates") or []:
                if c.get("id") in ids:
                    texts.update(t for t in (c.get("content"), c.get("via")) if isinstance(t, str))
    for p in packets:
        for call in p.get("calls") or []:
            for e in call.get("entries") or []:
                if e.get("id") in fragments and isinstance(e.get("content"), str):
                    texts.add(e["content"])
    texts.discard(PURGED)
    return {t for t in texts if t.strip()}, fragments


def _op_texts(op: dict) -> list:
    return [t for t in (op.get("content"), op.get("restated_content")) if isinstance(t, str)]


def forms(text: str, core_chars: int) -> list:
    """The ways a packet can hold this text, longest first."""
    one = " ".join(text.split())
    out = {text, one, one[:FRAGMENT_CHARS], one[:VIA_CHARS], one[:max(1, int(core_chars))]}
    out |= {json.dumps(t)[1:-1] for t in list(out)} | {json.dumps(t, ensure_ascii=False)[1:-1] for t in list(out)}
    return sorted((f for f in out if len(f) >= MIN_SUBSTRING), key=len, reverse=True)


def scrub_packet(packet: dict, ids: set, texts: set, fragments: set, now: float, core_chars: int) -> bool:
    """Remove the texts from one packet (in place); True when anything changed. Adds the note."""
    whole = set(texts) | {" ".join(t.split()) for t in texts}
    patterns = sorted({f for t in texts for f in forms(t, core_chars)}, key=len, reverse=True)
    before = json.dumps(packet, sort_keys=True)
    for call in packet.get("calls") or []:
        for e in call.get("entries") or []:
            if e.get("id") in fragments:
                e["content"] = PURGED
        for c in call.get("candidates") or []:
            if c.get("id") in ids:
                c["content"], c["via"] = PURGED, None
    for op in _all_ops(packet):
        if isinstance(op.get("content"), str) and " ".join(op["content"].split()) in whole:
            op["content"] = PURGED
            op.pop("rationale", None)
        if isinstance(op.get("restated_content"), str) and " ".join(op["restated_content"].split()) in whole:
            op["restated_content"] = None
    _replace_strings(packet, whole, patterns)
    if json.dumps(packet, sort_keys=True) == before:
        return False
    packet.setdefault("purges", []).append({"ids": sorted(ids), "at": now, "note": NOTE})
    return True


def _all_ops(packet: dict) -> list:
    ops = list(packet.get("operations") or [])
    for call in packet.get("calls") or []:
        ops += list(call.get("ops") or [])
        if isinstance(call.get("denied"), dict):
            ops.append(call["denied"])
    return [op for op in ops if isinstance(op, dict)]


def _replace_strings(node, whole: set, patterns: list) -> None:
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, value in list(items):
        if isinstance(node, dict) and key in ID_KEYS:
            continue
        if isinstance(value, str):
            node[key] = scrubbed(value, whole, patterns)
        elif isinstance(value, (dict, list)):
            _replace_strings(value, whole, patterns)

