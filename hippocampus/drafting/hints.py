"""A brief's hints matched against a cluster (pure). A hint matches as a substring (a noise hint only from the start
of a word), as a tag, or (promote hints only) by LOOSE_SHARE of its significant words, directly or by stem.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterable

from hippocampus.drafting.cluster import Cluster

STOP = frozenset("the and for with that this from about was were are his her their its our "
                 "you your not but into out".split())
LOOSE_SHARE = 0.6
NO_EVIDENCE = 10 ** 6
_WORD = re.compile(r"\w+")


@dataclass
class HintHits:
    promote: list = field(default_factory=list)
    noise: list = field(default_factory=list)


def hint_match(hint: str, cluster_tags: Iterable[str], haystack: str, loose: bool) -> bool:
    hint = (hint or "").strip().lower()
    if not hint:
        return False
    hay = (haystack or "").lower()
    # a promote hint anywhere; a noise hint only where a word starts ("rain" is not in "training")
    if (hint in hay if loose else re.search(r"(?<!\w)" + re.escape(hint), hay)) \
            or hint in {t.lower() for t in cluster_tags}:
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
