"""Which fragment of a pile may correct which shown core (pure): a suggestion for the small model, never a
decision. A fragment is a supersede candidate for a core when the two are on the same topic (they share a
content word, or the core's topic shares a tag with the pile's) and differ in a specific of the same sort:
the core holds a number (or a proper name) the fragment does not, and the fragment one the core does not
("Sam moved to Lyon" against "Sam lives in Paris").
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from hippocampus.drafting.cluster import tags

_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?", re.U)
_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")
_SENTENCE_START = re.compile(r"(?:^|[.!?…]\s+|\n)\s*[\"'“‘(]*([^\W\d_][\w'’-]*)", re.U)
CUES = ("actually", "anymore", "any more", "changed", "correction", "instead", "moved", "no longer", "not",
        "now", "new", "switched", "turns out", "wrong", "became", "since", "no more", "stopped", "quit")
STRONG = ("anymore", "any more", "changed", "correction", "instead", "moved", "no longer", "no more", "stopped",
          "switched", "turns out", "quit")
STOP = frozenset("""a about above after again against all am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further had has have having
he her here hers herself him himself his how i if in into is it its itself just me more most my myself no nor
not now of off on once only or other our ours ourselves out over own same she should so some such than that the
their theirs them themselves then there these they this those through to too under until up very was we were
what when where which while who whom why will with would you your yours yourself yourselves also still today
yesterday tomorrow week day night morning evening""".split())


@dataclass(frozen=True)
class Suggestion:
    fragment: str          # its marker, "f3"
    core: str              # "c1"
    says: str              # the fragment's differing specifics, "Lyon" ("" : a change said in words)
    was: str               # the core's, "Paris"
    held: bool = False     # the core is on the pile's own topic: choosing the fragment supersedes it


def _names(text: str) -> dict:
    """Capitalised words that do not start a sentence: lower-cased -> as written."""
    starts = {m.start(1) for m in _SENTENCE_START.finditer(text)}
    out: dict = {}
    for m in _WORD.finditer(text):
        w = m.group(0)
        if w[:1].isupper() and m.start() not in starts and w.lower() not in STOP:
            out.setdefault(w.lower(), w)
    return out


def specifics(text: str) -> dict:
    """{"number": {as written: as written}, "name": {lower-cased: as written}} of a text."""
    return {"number": {n: n for n in _NUMBER.findall(text or "")}, "name": _names(text or "")}


def content_words(text: str) -> set:
    return {w.lower() for w in _WORD.findall(text or "") if len(w) > 2 and w.lower() not in STOP
            and not w.isdigit()}


def _cues(text: str, cues: tuple = CUES) -> set:
    low = f" {(text or '').lower()} "
    return {c for c in cues if f" {c} " in low or f" {c}," in low or f" {c}." in low or f" {c};" in low}


def said_changed(text: str) -> bool:
    """The fragment says in words that something changed: a strong cue, or two of the weak ones."""
    return bool(_cues(text, STRONG)) or len(_cues(text)) >= 2


def suggest(fragments: dict, cores: dict, topic: Optional[str] = None) -> list:
    """fragments: marker -> text; cores: marker -> (text, topic). At most one suggestion per fragment (its
    best core) and per core (its best fragment), best first. A fragment on a core's own topic (the pile's tags
    and the core's meet) that differs from it in a specific, or says in words that something changed, is held:
    the schema lets it be chosen only as the supersede of that core."""
    scored = []
    for fm, ftext in fragments.items():
        fw, fs = content_words(ftext), specifics(ftext)
        for cm, (ctext, ctopic) in cores.items():
            cw, cs = content_words(ctext), specifics(ctext)
            own = bool(tags(topic) & tags(ctopic))
            shared = len(fw & cw) + (1 if own else 0)
            if not shared:
                continue
            for sort in ("number", "name"):
                new = [fs[sort][k] for k in fs[sort] if k not in cs[sort]]
                old = [cs[sort][k] for k in cs[sort] if k not in fs[sort]]
                if new and old:
                    score = shared + (2 if _cues(ftext) else 0) + (1 if sort == "name" else 0)
                    scored.append((score, fm, cm, ", ".join(new), ", ".join(old), own))
                    break
            else:
                if own and fw & cw and said_changed(ftext):
                    scored.append((shared + 2, fm, cm, "", "", True))
    scored.sort(key=lambda s: -s[0])
    out, used_f, used_c = [], set(), set()
    for _, fm, cm, says, was, own in scored:
        if fm in used_f or cm in used_c:
            continue
        used_f.add(fm)
        used_c.add(cm)
        out.append(Suggestion(fm, cm, says, was, own))
    return out
