"""Did-you-mean for config keys: a key in the wrong block, or a typo, named with the likely setting."""
from __future__ import annotations

import difflib
from typing import Iterable

CUTOFF = 0.75       # difflib's ratio: "prot" for "port" is 0.75, "colour" for any key far below


def _nearest(leaf: str, paths: list) -> list:
    """Every path whose key is the closest spelling of `leaf` (several when blocks share the key)."""
    by_key: dict = {}
    for p in paths:
        by_key.setdefault(p.rpartition(".")[2], []).append(p)
    best = difflib.get_close_matches(leaf.lower(), list(by_key), n=1, cutoff=CUTOFF)
    return sorted(by_key[best[0]]) if best else []


def unknown_key_line(path: str, known: Iterable[str]) -> str:
    """Names what `path` likely meant: the same key in another block, else the nearest spelling in its own
    block, else the nearest spelling anywhere."""
    known = list(known)
    parent, _, leaf = path.rpartition(".")
    found = ([p for p in known if p.rpartition(".")[2] == leaf and p != path]
             or _nearest(leaf, [p for p in known if p.rpartition(".")[0] == parent])
             or _nearest(leaf, [p for p in known if p.rpartition(".")[0] != parent]))
    meant = " - did you mean " + " or ".join(found) + "?" if found else ""
    return f"'{path}' is not a setting and was ignored{meant}"
