"""Is what Memory holds in a draft true to the corpus? Pure checks the real-model tests and the quality
benchmark share (issue 39), independent of the service's own guard so that they can catch it missing.

- `specifics(text)`: what a statement states that a reader could check: numbers (with their unit-less digits,
  times like 15:30), proper names (capitalised words not opening a sentence), quoted words.
- `invented(op, fragments, cores)`: the specifics of one operation's content found in none of the fragments it
  cites (nor, for attach and supersede, in its target core): an empty list is a grounded operation.
- `duplicates(ops)`: pairs of operations of one draft that say the same thing (the same content words).
- `judge(draft_ops, ...)`: per operation what a reviewer would find, for the tests' asserts and the bench's table.
"""
from __future__ import annotations

import re
import unicodedata
from typing import Iterable, Optional

_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")
_QUOTED = re.compile(r"[\"“«']([^\"”»']{2,60})[\"”»']")
_WORD = re.compile(r"[^\W\d_][\w'’-]*", re.UNICODE)
_SENTENCE_END = re.compile(r"[.!?:;]\s*$")
STOP = frozenset("""a an the and or but of to in on at for with from by as is are was were be been being it its
this that these those i me my we our you your he him his she her they them their mara not no so then than
has have had do does did will would can could should very just also now again about into over after before
""".split())
NOT_NAMES = frozenset({"I", "I'm", "I've", "I'd", "I'll", "Mara's"})


def _fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def specifics(text: str) -> list:
    """The checkable specifics of a statement, in order, without repeats."""
    found: list = []

    def add(s: str) -> None:
        s = s.strip(" .,;:!?")
        if s and s not in found:
            found.append(s)
    for m in _NUMBER.finditer(text):
        add(m.group())
    for m in _QUOTED.finditer(text):
        add(m.group(1))
    for m in _WORD.finditer(text):
        w = m.group()
        before = text[:m.start()]
        opens = not before.strip() or bool(_SENTENCE_END.search(before))
        if w[0].isupper() and not opens and w not in NOT_NAMES and w.lower() not in STOP:
            add(w)
    return found


def content_words(text: str) -> set:
    return {w for w in (_fold(m.group()) for m in _WORD.finditer(text)) if w not in STOP and len(w) > 2}


def _forms(word: str) -> tuple:
    """A name as written, and without a plural or possessive s ("Wednesdays", "Ines's" -> "wednesday", "ines")."""
    for end in ("'s", "’s", "s"):
        if word.endswith(end) and len(word) > len(end) + 2:
            return word, word[:-len(end)]
    return (word,)


def invented(content: str, sources: Iterable[str]) -> list:
    """The specifics of `content` that appear in none of `sources` (case- and width-insensitive)."""
    hay = _fold(" ".join(sources))
    hay_numbers = set(_NUMBER.findall(hay))
    out = []
    for s in specifics(content):
        if _NUMBER.fullmatch(s):
            if s not in hay_numbers:
                out.append(s)
        elif not any(form in hay for form in _forms(_fold(s))):
            out.append(s)
    return out


def same_thing(a: str, b: str, threshold: float = 0.8) -> bool:
    """Two statements that say the same thing: their content words overlap by `threshold` (Jaccard)."""
    wa, wb = content_words(a), content_words(b)
    if not wa or not wb:
        return _fold(a.strip()) == _fold(b.strip())
    return len(wa & wb) / len(wa | wb) >= threshold


def duplicates(ops: list) -> list:
    """Index pairs (i, j), i < j, of operations of one draft that say the same thing."""
    return [(i, j) for i in range(len(ops)) for j in range(i + 1, len(ops))
            if same_thing(ops[i].get("content") or "", ops[j].get("content") or "")]


def judge(op: dict, text_of_short: dict, text_of_core: dict) -> dict:
    """One draft operation as Memory holds it, judged against what it cites:
    {"invented": [...], "cites_unknown": [...], "target_text": str or None}."""
    cited = list(op.get("source_short_ids") or [])
    unknown = [s for s in cited if s not in text_of_short]
    sources = [text_of_short[s] for s in cited if s in text_of_short]
    target = text_of_core.get(op.get("target_core_id")) if op.get("kind") in ("attach", "supersede") else None
    if target:
        sources.append(target)
    return {"invented": invented(op.get("content") or "", sources), "cites_unknown": unknown,
            "target_text": target}


def grounded(op: dict, text_of_short: dict, text_of_core: dict) -> bool:
    j = judge(op, text_of_short, text_of_core)
    return not j["invented"] and not j["cites_unknown"]


def first(items: Iterable, pred) -> Optional[object]:
    return next((x for x in items if pred(x)), None)
