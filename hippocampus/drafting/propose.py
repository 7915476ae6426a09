"""The plan of one sleep, before any model is asked (pure): short-terms in clusters by their tags, a brief's hints
matched against each, and the piles the model is asked about.

A memory joins the cluster whose FIRST member shares the most tags with it (Jaccard, at least JOIN_AT): comparing
with the anchor only keeps a cluster from drifting by chaining. A hint matches as a substring, as a tag, or (promote
hints only) by LOOSE_SHARE of its significant words, directly or by stem.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional

JOIN_AT = 0.5
STOP = frozenset("the and for with that this from about was were are his her their its our "
                 "you your not but into out".split())
LOOSE_SHARE = 0.6
NO_EVIDENCE = 10 ** 6
VERBATIM_RATIONALE = "preserved word for word at the person's request"
_WORD = re.compile(r"\w+")


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


def _text(entry: dict) -> str:
    c = entry.get("content")
    return c if isinstance(c, str) else ""


@dataclass
class Cluster:
    topic: Optional[str]
    entries: list = field(default_factory=list)

    @property
    def tags(self) -> frozenset:
        return tags(self.topic).union(*(tags(topic_of(e)) for e in self.entries))


@dataclass
class HintHits:
    promote: list = field(default_factory=list)
    noise: list = field(default_factory=list)


@dataclass
class Pile:
    topic: Optional[str]
    entries: list
    hits: HintHits = field(default_factory=HintHits)
    cluster: int = 0            # which cluster of the plan this pile was cut from


@dataclass
class Plan:
    verbatim_ops: list = field(default_factory=list)
    piles: list = field(default_factory=list)
    hint_hits: dict = field(default_factory=lambda: {"promote": {}, "noise": {}})
    below_threshold: int = 0


def cluster_by_tags(shorts: Iterable[dict]) -> list:
    """Piles in input order; the untagged pile (topic None) comes last."""
    piles: list = []
    anchors: list = []
    untagged: list = []
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


def hint_match(hint: str, cluster_tags: Iterable[str], haystack: str, loose: bool) -> bool:
    hint = (hint or "").strip().lower()
    if not hint:
        return False
    hay = (haystack or "").lower()
    if hint in hay or hint in {t.lower() for t in cluster_tags}:
        return True
    words = [w for w in _WORD.findall(hint) if len(w) >= 3 and w not in STOP]
    if not loose or len(words) < 2:
        return False
    hay_words = set(_WORD.findall(hay))
    seen = sum(1 for w in words if w in hay_words
               or len(w) >= 4 and any(h.startswith(w[:max(4, len(w) - 2)]) for h in hay_words))
    return seen / len(words) >= LOOSE_SHARE


def haystack(cluster: Cluster) -> str:
    """The topic, " || ", then every entry's content, all lower-cased."""
    parts = [e["content"].lower() for e in cluster.entries if isinstance(e, dict) and isinstance(e.get("content"), str)]
    return (cluster.topic or "").lower() + " || " + "\n".join(parts)


def _clean(hints: Any) -> list:
    return sorted({h.strip().lower() for h in hints or () if isinstance(h, str) and h.strip()})


def match_hints(cluster: Cluster, promote_hints: Iterable[str], noise_hints: Iterable[str]) -> HintHits:
    """Promote hints match loosely, noise hints strictly (exact or tag)."""
    promote, noise = _clean(promote_hints), _clean(noise_hints)
    if not promote and not noise:
        return HintHits()              # no haystack to build: a brief without hints, over every cluster
    hay, ctags = haystack(cluster), cluster.tags
    return HintHits([h for h in promote if hint_match(h, ctags, hay, True)],
                    [h for h in noise if hint_match(h, ctags, hay, False)])


def threshold(min_evidence: int, hits: HintHits) -> int:
    """Noise wins over promote; a promote hit lowers the bar to one fragment."""
    if hits.noise:
        return NO_EVIDENCE
    return 1 if hits.promote else min_evidence


def _is_verbatim(entry: dict) -> bool:
    return bool(meta_of(entry).get("verbatim")) and bool(_text(entry).strip())


def _record(table: dict, hints: list, topic: Optional[str]) -> None:
    for h in hints:
        topics = table.setdefault(h, [])
        if (topic or "untagged") not in topics:
            topics.append(topic or "untagged")


def plan_sleep(shorts: Iterable[dict], *, promote_hints: Iterable[str], noise_hints: Iterable[str],
               min_evidence: int, pile_max: int) -> Plan:
    plan = Plan()
    promote = list(promote_hints or ())
    noise = list(noise_hints or ())
    for n, cluster in enumerate(cluster_by_tags([s for s in shorts if isinstance(s, dict)])):
        plan.verbatim_ops += [{"kind": "verbatim", "content": _text(e), "topic": cluster.topic or None,
                               "source_short_ids": [e.get("id")], "evidence_count": 1,
                               "rationale": VERBATIM_RATIONALE, "target_core_id": None}
                              for e in cluster.entries if _is_verbatim(e)]
        rest = [e for e in cluster.entries if not _is_verbatim(e)]
        if not rest:
            continue
        hits = match_hints(Cluster(cluster.topic, rest), promote, noise)
        _record(plan.hint_hits["promote"], hits.promote, cluster.topic)
        _record(plan.hint_hits["noise"], hits.noise, cluster.topic)
        pinned = any(meta_of(e).get("pinned") for e in rest)
        if not pinned and len(rest) < threshold(min_evidence, hits):
            plan.below_threshold += len(rest)
            continue
        plan.piles += [Pile(cluster.topic, chunk, hits, n) for chunk in split_piles(rest, pile_max)]
    return plan


def whole_clusters(piles: list) -> list:
    """The piles joined back into one per cluster: with no prompt to bound, a cluster is one core, not one per pile."""
    joined: dict = {}
    for pile in piles:
        joined.setdefault(pile.cluster, Pile(pile.topic, [], pile.hits, pile.cluster)).entries.extend(pile.entries)
    return list(joined.values())


def mechanical_ops(pile: Pile) -> list:
    """No model: one new_core keeping the longest fragment, citing them all."""
    if not pile.entries:
        return []
    longest = max(pile.entries, key=lambda e: len(_text(e)))  # first of the longest
    n = len(pile.entries)
    return [{"kind": "new_core", "content": _text(longest), "topic": pile.topic,
             "source_short_ids": [e.get("id") for e in pile.entries], "evidence_count": n,
             "rationale": (f"mechanical: {n} fragment(s) on '{pile.topic or 'untagged'}', longest kept; "
                           "no model to judge attach/supersede"), "target_core_id": None}]
