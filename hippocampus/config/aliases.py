"""YAML aliases bounded: a config file's composed node graph may not expand to more than EXPANSION_BUDGET values.

An alias is a pointer to a node already read, so a few hundred bytes of aliases of aliases (an "alias bomb")
stand for billions of values; the parser builds them shared and cheaply, but whatever walks them later (the
settings, the model's request body, check-config's print) walks every one. The expanded count is taken here
from the composed graph, each distinct node counted once per place it is reached (memoized, so the count costs
one pass over the nodes actually in the file), before anything is built from it. A node that holds itself
(a recursive alias) has no size: it is refused the same way.
"""
from __future__ import annotations

from typing import Any, Optional

EXPANSION_BUDGET = 100_000      # values a config may expand to; the sample config holds a few hundred


class AliasBomb(ValueError):
    """The file expands past the budget; str() names the key and what to do."""

    def __init__(self, key: str, recursive: bool = False):
        self.key = key
        why = ("an alias refers to the node that holds it (a recursive alias)" if recursive else
               f"its aliases expand to more than {EXPANSION_BUDGET:,} values")
        where = f"{key}: " if key else ""
        super().__init__(f"{where}too many aliases (a YAML alias bomb?): {why}; write the values out, "
                         "or alias less")


class _Recursive(Exception):
    pass


def _children(node: Any) -> list:
    value = getattr(node, "value", None)
    if not isinstance(value, list):
        return []                           # a scalar
    # a mapping's items are (key, value) pairs, a list's are nodes
    return [child for item in value for child in (item if isinstance(item, tuple) else (item,))]


def expanded_size(node: Any, sizes: dict, open_: Optional[set] = None) -> int:
    """How many values `node` stands for once every alias in it is written out (capped just past the budget);
    `sizes` memoizes it by node."""
    open_ = set() if open_ is None else open_
    key = id(node)
    if key in sizes:
        return sizes[key]
    if key in open_:
        raise _Recursive()
    open_.add(key)
    total = 1
    for child in _children(node):
        total += expanded_size(child, sizes, open_)
        if total > EXPANSION_BUDGET:
            break
    open_.discard(key)
    sizes[key] = total = min(total, EXPANSION_BUDGET + 1)
    return total


def check(root: Any, known_blocks: frozenset = frozenset()) -> None:
    """AliasBomb naming the setting (`model.extra_body`) whose value expands past the budget. The key path
    goes down through the blocks of settings (`known_blocks`: `model`, `model.lifecycle`, ...) and stops at the
    first key that is not one: the setting a person wrote."""
    sizes: dict = {}        # a None root (an empty file) is one value: within the budget
    try:
        if expanded_size(root, sizes) <= EXPANSION_BUDGET:
            return
    except _Recursive:
        raise AliasBomb(_culprit(root, known_blocks, sizes), recursive=True) from None
    raise AliasBomb(_culprit(root, known_blocks, sizes))


def _culprit(node: Any, known_blocks: frozenset, sizes: dict) -> str:
    path = ""
    while isinstance(getattr(node, "value", None), list) and getattr(node, "tag", "").endswith(":map"):
        nxt = None
        for k, v in node.value:
            try:
                bad = expanded_size(v, sizes) > EXPANSION_BUDGET
            except _Recursive:
                bad = True
            if bad:
                name = str(getattr(k, "value", k))
                nxt, path = v, f"{path}.{name}" if path else name
                break
        if nxt is None or path not in known_blocks:
            return path
        node = nxt
    return path
