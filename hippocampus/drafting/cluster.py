"""Short-terms in clusters by their tags (pure). A memory joins the cluster whose FIRST member shares the most tags
with it (Jaccard, at least JOIN_AT): comparing with the anchor only keeps a cluster from drifting by chaining.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional

JOIN_AT = 0.5


def tags(topic: Any) -> frozenset:
    """A topic string as a set of tags: split on commas, trimmed, lower-cased."""
    return _tags(topic) if isinstance(topic, str) else frozenset()


@functools.lru_cache(maxsize=4096)
def _tags(topic: str) -> frozenset:      # a sleep asks for the same few hundred topics thousands of times
    return frozenset(t.strip().lower() for t in topic.split(",") if t.strip())


def meta_of(entry: Any) -> dict:
    meta = entry.get("metadata") if isinstance(entry, dict) else None
    return meta if isinstance(meta, dict) else {}


def topic_of(entry: Any) -> Optional[str]:
    topic = meta_of(entry).get("topic")
    return topic if isinstance(topic, str) else None


def _ts(entry: Any) -> float:
    ts = meta_of(entry).get("ts")
    return 0.0 if isinstance(ts, bool) or not isinstance(ts, (int, float)) else float(ts)


@dataclass
class Cluster:
    topic: Optional[str]
    entries: list = field(default_factory=list)

    @property
    def tags(self) -> frozenset:
        return tags(self.topic).union(*(tags(topic_of(e)) for e in self.entries))


def cluster_by_tags(shorts: Iterable[dict]) -> list:
    """Piles in input order; the untagged pile (topic None) comes last."""
    piles, anchors, untagged = [], [], []
    # tag set -> (best anchor, its index, how many anchors that covered): anchors are only ever added, so a
    # tag set seen before is compared only with the anchors added since (the same first-best answer)
    seen: dict = {}
    for entry in shorts:
        meta = entry.get("metadata") if isinstance(entry, dict) else None      # topic_of(), inlined: hot
        mine = tags(meta.get("topic") if isinstance(meta, dict) else None)
        if not mine:
            untagged.append(entry)
            continue
        best, best_j, scanned = seen.get(mine, (None, -1.0, 0))
        for i in range(scanned, len(anchors)):
            j = len(mine & anchors[i]) / len(mine | anchors[i])     # Jaccard; mine is never empty here
            if j > best_j:
                best, best_j = i, j
        seen[mine] = (best, best_j, len(anchors))
        if best is not None and best_j >= JOIN_AT:
            piles[best].entries.append(entry)
        else:
            piles.append(Cluster(topic=topic_of(entry), entries=[entry]))
            anchors.append(mine)
    if untagged:
        piles.append(Cluster(topic=None, entries=untagged))
    return piles


def split_piles(entries: Iterable[dict], pile_max: int) -> list:
    """Oldest first (by metadata.ts, missing = 0), in chunks of at most pile_max."""
    size = max(1, int(pile_max))
    ordered = sorted(entries, key=_ts)  # stable: ties keep input order
    return [ordered[i:i + size] for i in range(0, len(ordered), size)]
