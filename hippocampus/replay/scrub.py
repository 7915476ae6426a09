"""Forgetting reaches the packets: a purge leaves no copy of the content on this machine.

When a purge lands, the purged memory's text and its fragments' text are removed from every packet that
holds them, in every form a packet holds them (the field itself, the prompt's one-line and cut forms, the
answer's JSON-escaped form). Which texts: what Memory's own scrub touches (an operation whose long_term_id
or target is a purged id: its drafted content and rewording, and for one that became or fed the memory,
its fragments), and any core shown under a purged id. The packet keeps its ids and a note of the purge.
The operations' texts come from the packets, the links from Memory's drafts; when Memory cannot be read
the ids are kept as owed and the scrub is finished on the next purge step (every tick).
"""
from __future__ import annotations

import json
import logging
from typing import Iterable, Optional

from ..memory import MemoryError_
from ..sleep.prompt import FRAGMENT_CHARS, VIA_CHARS
from .capture import store_for

log = logging.getLogger("hippocampus.replay")

PURGED = "[purged]"
MIN_SUBSTRING = 4            # shorter forms are only replaced where they are a whole field
DRAFTS_READ = 1000
ID_KEYS = frozenset({"id", "draft_id", "cluster_id", "brief_id", "redraft_of", "marker", "target_core_id",
                     "source_short_ids", "long_term_id", "stage", "finish_reason", "purges", "target_op",
                     "kind", "stamp", "served", "ts", "version"})
NOTE = "the text of a purged memory and of its fragments was removed here; ids are kept"


def forget(ctx, purged: Iterable[str]) -> int:
    """The hook after a purge (every tick): scrub the packets of these ids and of any still owed. Never raises."""
    try:
        store = store_for(ctx.cfg)
        ids = list(dict.fromkeys(store.owed() + [i for i in purged or [] if i]))
        if not ids or not store.paths():
            return 0
        try:
            drafts: Optional[list] = ctx.memory.drafts(None, limit=DRAFTS_READ)
        except MemoryError_ as exc:
            log.warning("Memory's drafts could not be read to scrub the replay packets (%s); the scrub of "
                        "%d purged id(s) is finished on the next tick", exc, len(ids))
            drafts = None
        changed = scrub_store(store, ids, drafts or [], ctx.clock.now(), ctx.cfg.sleep.core_chars)
        store.set_owed(ids if drafts is None else [])
        if changed:
            log.info("removed the text of %d purged memory(ies) from %d replay packet(s)", len(ids), changed)
        return changed
    except Exception:  # noqa: BLE001 - the purge itself has landed; say loudly that the copy has not gone
        log.exception("could not scrub the replay packets after a purge")
        return 0


def scrub_store(store, ids: list, drafts: list, now: float, core_chars: int) -> int:
    packets = list(store.packets())
    texts, fragments = what_to_remove([p for _, p in packets], set(ids), drafts)
    changed = 0
    for path, packet in packets:
        if scrub_packet(packet, set(ids), texts, fragments, now, core_chars) and store.rewrite(path, packet):
            changed += 1
    return changed


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
            node[key] = _scrubbed(value, whole, patterns)
        elif isinstance(value, (dict, list)):
            _replace_strings(value, whole, patterns)


def _scrubbed(value: str, whole: set, patterns: list) -> str:
    if value in whole or " ".join(value.split()) in whole:
        return PURGED
    for p in patterns:
        if p in value:
            value = value.replace(p, PURGED)
    return value
