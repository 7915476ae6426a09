"""The plan of one sleep, before any model is asked (pure): short-terms in clusters by their tags, a brief's hints
matched against each, and the piles the model is asked about.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Optional

from hippocampus.drafting.cluster import Cluster, cluster_by_tags, meta_of, split_piles
from hippocampus.drafting.hints import HintHits, match_hints, threshold

VERBATIM_RATIONALE = "preserved word for word at the person's request"


def _text(entry: dict) -> str:
    c = entry.get("content")
    return c if isinstance(c, str) else ""


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


def _is_verbatim(entry: dict) -> bool:
    return bool(meta_of(entry).get("verbatim")) and bool(_text(entry).strip())


def _record(table: dict, hints: list, topic: Optional[str]) -> None:
    tag = topic or "untagged"
    for h in hints:
        topics = table.setdefault(h, [])
        if tag not in topics:
            topics.append(tag)


def plan_sleep(shorts: Iterable[dict], *, promote_hints: Iterable[str], noise_hints: Iterable[str],
               min_evidence: int, pile_max: int) -> Plan:
    plan = Plan()
    promote, noise = list(promote_hints or ()), list(noise_hints or ())
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
