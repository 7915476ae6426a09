"""The nearest existing cores for a pile of fragments, through Memory's search."""
from __future__ import annotations

import json
import logging
from typing import Optional

from hippocampus.memory import MemoryClient, MemoryError_

log = logging.getLogger(__name__)
RRF_K = 60


def parents(meta: dict) -> list:
    """Every core a satellite supports: its own (core_id), then the others it also supports (also_core_ids, a list
    or Memory's JSON spelling of one)."""
    also = meta.get("also_core_ids")
    if isinstance(also, str) and also.startswith("["):
        try:
            also = json.loads(also)
        except ValueError:
            also = None
    ids = [meta.get("core_id")] + (also if isinstance(also, list) else [])
    return [str(c) for c in dict.fromkeys(ids) if c]


def find_candidates(memory: MemoryClient, texts: list, wanted: int) -> list:
    """Cores near these texts, best first: one search over the texts together (a pile is one topic), satellites
    counting for each core they support."""
    if wanted <= 0:
        return []
    queries = [t[:1500] for t in texts if t and t.strip()][:8]
    if not queries:
        return []
    try:                            # one search for the pile: each search is an embedding in Memory
        hits = memory.search_long(" ".join(queries)[:1500], n=wanted)
    except MemoryError_ as exc:
        log.warning("candidate search failed (%s)", exc)
        log.warning("candidate search failed for every query; proposing without existing cores")
        return []
    scores, rows, via = {}, {}, {}      # core id -> fused score, its row, the satellite it was found by
    for rank, hit in enumerate(h for h in hits if h.get("tier", "long") == "long"):
        meta = hit.get("metadata") or {}
        if meta.get("superseded_by") or meta.get("forget_flag"):
            continue        # replaced, or about to be purged: an attach to it could never land
        if meta.get("kind") == "satellite":
            cids = parents(meta)
            for cid in cids:
                via.setdefault(cid, hit.get("content", ""))
        else:
            cids = [hit.get("id")]
            rows[hit.get("id")] = hit
        for cid in cids:
            scores[cid] = scores.get(cid, 0.0) + 1.0 / (RRF_K + rank + 1)
    out = []
    for cid in sorted(scores, key=lambda c: -scores[c]):
        row: Optional[dict] = rows.get(cid)
        if row is None:     # found through a satellite: the core with its count (GET /memory/{id} has none)
            try:
                got = memory.satellites(cid) or {}
            except MemoryError_:
                got = {}
            row = dict(got["core"], satellites=got.get("count")) if got.get("core") else None
            gone = any(((row or {}).get("metadata") or {}).get(k) for k in ("superseded_by", "forget_flag"))
            if not row or gone or row.get("tier", "long") != "long":      # as a hit of its own is skipped above
                continue
        meta, sur = row.get("metadata") or {}, row.get("surroundings") or {}
        try:
            sats = int(row.get("satellites", sur.get("satellites", 0)) or 0)
        except (TypeError, ValueError):
            sats = 0
        out.append({"id": cid, "content": row.get("content", ""), "topic": meta.get("topic") or row.get("topic"),
                    "satellites": sats, "via": via.get(cid)})
        if len(out) >= wanted:
            break
    return out
