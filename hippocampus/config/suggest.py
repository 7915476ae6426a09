"""Did-you-mean for config keys: a key in the wrong block, or a typo, named with the likely setting.

Pure: given the path that was not found and every path the config has, the line to show.
"""
from __future__ import annotations

from typing import Iterable, Optional


def distance(a: str, b: str) -> int:
    """Edit distance with adjacent swaps (Damerau-Levenshtein, optimal string alignment)."""
    a, b = a.lower(), b.lower()
    prev2: list = []
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb))
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        prev2, prev = prev, cur
    return prev[-1]


def _close_enough(word: str, candidate: str) -> bool:
    return distance(word, candidate) <= max(1, min(len(word), len(candidate)) // 3)


def suggestions(path: str, known: Iterable[str]) -> list:
    """The settings `path` most likely meant: the same key in another block (misplaced), else the nearest
    spelling in its own block, else the nearest spelling of that key anywhere."""
    known = list(known)
    parent, _, leaf = path.rpartition(".")
    misplaced = [p for p in known if p.rpartition(".")[2] == leaf and p != path]
    if misplaced:
        return misplaced
    siblings = [p for p in known if p.rpartition(".")[0] == parent]
    best = _nearest(leaf, siblings)
    if best:
        return best
    return _nearest(leaf, [p for p in known if p.rpartition(".")[0] != parent])


def _nearest(leaf: str, paths: list) -> list:
    scored = [(distance(leaf, p.rpartition(".")[2]), p) for p in paths if _close_enough(leaf, p.rpartition(".")[2])]
    if not scored:
        return []
    low = min(s for s, _ in scored)
    return sorted(p for s, p in scored if s == low)


def unknown_key_line(path: str, known: Iterable[str]) -> str:
    line = f"'{path}' is not a setting and was ignored"
    found: Optional[list] = suggestions(path, known)
    if found:
        line += " - did you mean " + " or ".join(found) + "?"
    return line
