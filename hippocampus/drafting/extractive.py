"""Extractive drafting (pure): the model chooses and does not write, so it cannot invent a fact.

An answer is a list of choices, each {"words": "f2", "kind": ..., "target": "c1" | null, "also": ["f1"]}, held
by the JSON schema to the markers shown: the fragment whose own words become the operation's content, the kind,
a shown core as the target of an attach or supersede (none for a new_core), and the other fragments of the same
memory. The service builds the operation: its content is exactly the chosen fragment's text (whitespace made
one line), its citations only fragments of the pile, each fragment in one operation at most, so a draft holds
no more operations than its pile has fragments. A choice outside what was shown is dropped and named.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

from hippocampus.drafting.answer import _NONE, Parsed, _marker, parse_with
from hippocampus.drafting.prompt import one_line
from hippocampus.drafting.schema import UNBOUNDED, _object, cap_for, estimate_tokens, first_fitting, worst_case

NAME_EXTRACT = "extract_operations"
NEW, TARGETED = ("new_core",), ("attach", "supersede")
MAX_OPERATIONS = 8


def _schema(frags: list, cores: list, ops: int, also: int, held: Optional[dict] = None) -> dict:
    """held: fragment -> core; such a fragment's words can only be chosen as the supersede of that core."""
    if not frags:
        return _object({"operations": {"type": "array", "maxItems": 0}})
    held = {f: c for f, c in (held or {}).items() if f in frags and c in cores}
    free = [f for f in frags if f not in held]
    others = {"type": "array", "items": {"enum": frags}, "maxItems": max(0, min(also, len(frags) - 1))}
    return _object({"operations": {"type": "array", "items": choice_item(free, cores, others, held), "maxItems": ops}})


def choice_item(words: list, cores: list, others: dict, held: Optional[dict] = None) -> dict:
    """One choice: of `words` as a new_core, or as the attach or supersede of a shown core; a held fragment (held:
    fragment -> core) only as the supersede of its core. `others`: the schema of its "also"."""
    def variant(chosen: list, kinds: tuple, targets: Optional[list]) -> dict:
        return _object({"words": {"enum": chosen}, "kind": {"enum": list(kinds)},
                        "target": {"enum": targets} if targets else {"type": "null"}, "also": others})
    variants = [variant(words, NEW, None)] if words else []
    variants += [variant(words, TARGETED, cores)] if words and cores else []
    variants += [variant([f], ("supersede",), [c]) for f, c in (held or {}).items()]
    return variants[0] if len(variants) == 1 else {"anyOf": variants}


def extract_schema(markers: Any, max_tokens: int) -> dict:
    """As many choices as the pile has fragments (up to MAX_OPERATIONS) and as many `also` as fit the budget."""
    frags, cores, held = list(markers.fragments), list(markers.cores), getattr(markers, "held", None)
    cap = max(1, min(MAX_OPERATIONS, len(frags)))
    return first_fitting((_schema(frags, cores, ops, also, held) for ops in range(cap, 0, -1)
                          for also in range(max(0, len(frags) - 1), -1, -1)), max_tokens)


def extract_cap(markers: Any, ceiling: int) -> int:
    """The answer's max_tokens for this pile: its longest answer of choices with SHARE's margin, within model.max_tokens
    (`ceiling`). Three fragments' choices take a hundred-odd tokens, not model.max_tokens' two thousand."""
    return cap_for(estimate_tokens(worst_case(extract_schema(markers, UNBOUNDED))), ceiling)


def extract_format(markers: Any, max_tokens: int) -> dict:
    return {"type": "json_schema", "json_schema": {"name": NAME_EXTRACT, "schema": extract_schema(markers, max_tokens)}}


def words_of(markers: Any, m: str) -> str:
    """The chosen fragment's own text: whitespace made one line, nothing else changed."""
    entry = markers.entries.get(m) or {}
    return one_line(entry.get("content"))


def kind_of(raw: dict) -> str:
    return str(raw.get("kind") or "").strip().lower().replace("-", "_").replace(" ", "_")


def aimed(raw: dict, kind: str, markers: Any, cited: list) -> tuple:
    """(the shown core marker an attach or supersede targets, or None; why the choice is dropped, or None), the
    choice's `also` added to `cited` (shown fragments, once each)."""
    target = raw.get("target")
    target = None if isinstance(target, str) and target.strip().lower() in _NONE else target
    core = _marker(target, "c") if kind in TARGETED else None
    if kind in TARGETED and core not in markers.cores:
        return None, (f"{kind} of a core it was not shown: {str(target)[:40]!r}" if target is not None
                      else f"{kind} without a target")
    also = raw.get("also") or []
    also = [also] if isinstance(also, (str, int)) else also
    if not isinstance(also, list):
        return None, "also is not a list"
    for item in also:
        m = _marker(item, "f")
        if m not in markers.fragments:
            return None, f"cites a fragment it was not shown: {str(item)[:40]!r}"
        if m not in cited:
            cited.append(m)
    return core, None


def choice(raw: Any, markers: Any) -> tuple:
    """(the operation built from one choice, or None; why it was dropped)."""
    if not isinstance(raw, dict):
        return None, "not an object"
    words = _marker(raw.get("words"), "f")
    if words not in markers.fragments:
        return None, f"chooses a fragment it was not shown: {str(raw.get('words'))[:40]!r}"
    kind = kind_of(raw)
    if kind not in NEW + TARGETED:
        return None, f"unknown kind {kind[:30]!r}"
    if kind == "new_core" and words in (getattr(markers, "held", None) or {}):    # a plain answer, unheld
        kind, raw = "supersede", {**raw, "target": markers.held[words]}
    content = words_of(markers, words)
    if not content:
        return None, f"{words} has no words"
    cited = [words]
    core, why = aimed(raw, kind, markers, cited)
    if why:
        return None, why
    op = {"kind": kind, "content": content, "target_core_id": markers.cores[core] if core else None,
          "source_short_ids": cited, "evidence_count": len(cited), "rationale": _rationale(kind, core, cited)}
    return {k: v for k, v in op.items() if v is not None}, None


def _rationale(kind: str, core: Optional[str], cited: list) -> str:
    return (f"chosen, not written: the words of [{cited[0]}]" + (f", {kind} of [{core}]" if core else "")
            + (f", with {', '.join(f'[{c}]' for c in cited[1:])}" if cited[1:] else ""))


def _same(a: str, b: str) -> bool:
    return one_line(a).casefold().rstrip(".!") == one_line(b).casefold().rstrip(".!")


def operations(raw_ops: list, markers: Any, core_texts: Optional[dict] = None) -> tuple:
    """(operations, dropped): each choice built; of choices with the same words the first attach or supersede
    (else the first) kept; a fragment some operation takes as its words is no other's evidence, and a fragment
    is cited by one operation at most; no new_core that restates a shown core. core_texts: marker -> text."""
    core_texts = core_texts or {}
    built, dropped = [], []
    for i, raw in enumerate(raw_ops):
        op, why = choice(raw, markers)
        if op is None:
            dropped.append(f"op {i}: {why}")
        elif op["kind"] == "new_core" and any(_same(op["content"], t) for t in core_texts.values()):
            dropped.append(f"op {i}: a new_core that restates a shown core")
        else:
            built.append((i, op))
    winner: dict = {}                          # words -> the index of the choice kept for them
    for i, op in sorted(built, key=lambda t: t[1]["kind"] not in TARGETED):     # stable: targeted first
        winner.setdefault(op["source_short_ids"][0], i)
    kept, taken = [], set(winner)
    for i, op in built:
        words = op["source_short_ids"][0]
        if winner[words] != i:
            dropped.append(f"op {i}: the same words [{words}] as op {winner[words]}")
            continue
        cited = [words] + [m for m in op["source_short_ids"][1:] if m not in taken]
        taken.update(cited)
        core = next((m for m, cid in markers.cores.items() if cid == op.get("target_core_id")), None)
        op["rationale"] = _rationale(op["kind"], core, cited)
        op["source_short_ids"] = [markers.fragments[m] for m in cited]
        op["evidence_count"] = len(cited)
        kept.append(op)
    return kept, dropped


def parse_choices(text: str, *, finish_reason: Optional[str], markers: Any, max_tokens: int,
                  core_texts: Optional[dict] = None, constrained: bool = False,
                  ceiling: Optional[int] = None, build: Optional[Callable[[list], tuple]] = None) -> Parsed:
    """The operations built from one answer of choices (never raises): (operations, dropped) by `build(choices)`,
    by default operations()."""
    return parse_with(build or (lambda raw: operations(raw, markers, core_texts)), text, finish_reason, max_tokens,
                      constrained, single=lambda obj: isinstance(obj, dict) and "words" in obj, ceiling=ceiling)
