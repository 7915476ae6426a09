"""The grounding guard (pure): what the small model drafted is checked before anything is sent to Memory.

Invariant: an operation that leaves `check` states no specific (a number, date or time, a proper name, quoted
words) that none of its sources holds, shares at least WORD_SHARE of its content words with them, cites only
fragments of its own pile, is no placeholder, is no longer than the answer cap allows (CHARS_PER_TOKEN per token
of model.max_tokens), restates no shown core as a new_core and repeats no other operation of the draft; a pile
gives no more operations than it has fragments. Its sources: the fragments it cites (with the date shown beside
each), for attach and supersede its target, and for a redraft the reviewer's critique and the denied version.
An operation that fails is repaired where a rule can (it cites the fragment of its pile that holds what it says;
two duplicates become one citing both) or dropped; either is a Finding whose rule names why (RULES, REPAIRS).
"""
from __future__ import annotations

import dataclasses
import functools
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable, Optional

from hippocampus.drafting.answer import RATIONALE_CHARS
from hippocampus.drafting.grounding import (content_words, known_of, missing_specifics, near_duplicate, norm,
                                            unchecked_names, word_share)
from hippocampus.drafting.grounding import names  # noqa: F401 - the API

WORD_SHARE = 0.5           # of an operation's content words found in its sources
CHARS_PER_TOKEN = 8        # generous: no answer within model.max_tokens is longer than this many characters a token
EXAMPLES = 10

RULES = {   # why an operation was dropped, in the words the report uses ("12 operations dropped: ...")
    "oversize": "longer than the answer cap allows",
    "placeholder": "placeholders, not memories",
    "foreign": "citing fragments outside their pile",
    "numbers": "numbers in none of their fragments",
    "names": "names in none of their fragments",
    "quotes": "quoted words in none of their fragments",
    "words": "words mostly not from their fragments",
    "restates_core": "restating a core already in memory",
    "duplicate": "duplicates of another operation",
    "orphan": "aimed at an operation that was dropped",
    "over_cap": "more operations than the pile has fragments",
    "unreadable": "not readable as an operation",
}
REPAIRS = {
    "cited": "now cite the fragment that holds what they say",
    "merged": "merged with a duplicate, citing both",
    "foreign": "no longer cite fragments outside their pile",
    "placeholder": "lost a placeholder restatement",
    "restated": "lost a restatement their sources do not hold",
}

PLACEHOLDERS = frozenset(
    ["", "...", "…", "string", "text", "content", "n/a", "na", "none", "null", "nil", "tbd", "todo", "example",
     "placeholder", "statement", "summary", "memory", "lorem ipsum", "xxx", "the new statement",
     "a one-line summary of this episode", "one durable statement in the present tense", "your text here",
     "insert text here", "the content", "the memory", "a memory", "topic", "rationale", "kind"])
_BRACKETED = re.compile(r"^\s*(<[^<>]{0,80}>|\{[^{}]{0,80}\}|\[[^\[\]]{0,80}\])\s*$")
_MARKER_ONLY = re.compile(r"^\s*\[?\s*[fc]\d+\s*\]?\s*$", re.I)
_ENDS = " \t\r\n\"'`“”‘’«»„「」『』()[]<>{}.,;:!?*_-–—"


@dataclass
class Finding:
    rule: str                   # a key of RULES (dropped) or REPAIRS (repaired)
    op: int                     # the operation's place in the answer it came from
    detail: str = ""            # what was missing or changed ("12, Tuesday")
    content: str = ""           # its first words
    topic: Optional[str] = None


@dataclass
class Sources:
    """What one pile's operations may draw on: its fragments (id -> text, the shown date included), the cores
    shown beside them (id -> text) and, for a redraft, texts any operation may use (the critique, the denied op)."""
    fragments: dict = field(default_factory=dict)
    cores: dict = field(default_factory=dict)
    extra: tuple = ()


@dataclass
class Guarded:
    operations: list = field(default_factory=list)
    dropped: list = field(default_factory=list)
    repaired: list = field(default_factory=list)


# ------------------------------------------------------------------ one pile's operations


def is_placeholder(text: str) -> bool:
    t = norm(text).strip()
    if _BRACKETED.match(t) or _MARKER_ONLY.match(t):
        return True
    core = " ".join(t.strip(_ENDS).casefold().split())
    # and a text of stopwords and numbers only ("it is what it is", "42") says nothing to keep
    return core in PLACEHOLDERS or not any(ch.isalnum() for ch in core) or not content_words(core)


def _text_of(op: dict) -> str:
    return str(op.get("content") or "").strip()


def _finding(i: int, op: dict, rule: str, detail: str = "") -> Finding:
    """A finding on the operation at place i of its answer, which its first words name."""
    return Finding(rule, i, detail, " ".join(str(op.get("content") or "").split())[:80], op.get("topic"))


def _targets(op: dict, ops: list, sources: Sources) -> list:
    if op.get("kind") not in ("attach", "supersede"):
        return []
    if op.get("target_core_id"):
        return [sources.cores.get(op["target_core_id"], "")]
    t = op.get("target_op")
    if isinstance(t, int) and 0 <= t < len(ops):
        other = ops[t]
        return [str(other.get("content") or "")] + [sources.fragments.get(s, "") for s in
                                                     other.get("source_short_ids") or []]
    return []


def _texts(op: dict, ids: list, ops: list, sources: Sources) -> list:
    """What an operation citing `ids` may draw on: those fragments, its target, a redraft's extra texts."""
    return [sources.fragments[s] for s in ids] + _targets(op, ops, sources) + list(sources.extra)


def _warn(op: dict, ops: list, sources: Sources) -> None:
    """Names the guard could not check (a sentence's first word, a Title Case line's) that the operation's sources
    lack are named in its rationale, for the reviewer: "unchecked name at a sentence's start: Bertrand"."""
    ids = [s for s in op.get("source_short_ids") or [] if s in sources.fragments]
    said, held = [_text_of(op), str(op.get("restated_content") or "")], _texts(op, ids, ops, sources)
    found = dict.fromkeys(u for t in said if t for u in unchecked_names(t, held))
    groups = {where: ", ".join(w for at, w in found if at == where) for where, _ in found}
    if groups:
        note = "unchecked name " + "; ".join(f"{where}: {words}" for where, words in groups.items())
        room = RATIONALE_CHARS - len(note) - 2          # within the rationale's cap, the model's words giving way
        theirs = f"{op['rationale'][:room]}; " if op.get("rationale") and room > 0 else ""
        op["rationale"] = (theirs + note)[:RATIONALE_CHARS]


def _union(a: dict, b: dict) -> list:
    """The fragments two operations cite, each once, a's first."""
    return list(dict.fromkeys((a.get("source_short_ids") or []) + (b.get("source_short_ids") or [])))


def _cite(op: dict, ids: list) -> None:
    op["source_short_ids"] = ids
    op["evidence_count"] = max(1, len(ids))


def _ground(i: int, op: dict, ops: list, sources: Sources) -> tuple:
    """(the operation, grounded or repaired, or None; findings dropped, findings repaired)."""
    f, texts = functools.partial(_finding, i, op), functools.partial(_texts, op, ops=ops, sources=sources)
    op, fixed = dict(op), []
    given = list(op.get("source_short_ids") or [])
    cited = [s for s in given if s in sources.fragments]
    if len(cited) < len(given):
        if not cited:
            return None, [f("foreign", "none of the fragments it cites is in its pile")], []
        fixed.append(f("foreign", f"{len(given) - len(cited)} fragment(s) of another pile left out"))
    text, rest = _text_of(op), [s for s in sources.fragments if s not in cited]
    if op.get("kind") == "new_core":       # first: the core's specifics are in none of its fragments, as a rule
        same = next((cid for cid, core in sources.cores.items() if core and near_duplicate(text, core)), None)
        if same:
            return None, [f("restates_core", f"core {str(same)[:12]}")], []
    missing = missing_specifics(text, texts(cited))
    for rule, token in missing:        # cite the fragment of the pile that holds it, if one does
        holder = next((s for s in rest if known_of((sources.fragments[s],)).has(rule, token)), None)
        if holder is None:
            return None, [f(rule, token)], []
        if holder not in cited:
            cited.append(holder)
    if missing:
        still = missing_specifics(text, texts(cited))   # all it now cites together (10pm: none may say 10am)
        if still:
            return None, [f(*still[0])], []
        fixed.append(f("cited", ", ".join(t for _, t in missing)))
    if word_share(text, texts(cited)) < WORD_SHARE:
        before = word_share(text, texts(cited))
        for s in sorted(rest, key=lambda s: -word_share(text, [sources.fragments[s]])):
            if s in cited or word_share(text, [sources.fragments[s]]) == 0:
                continue
            cited.append(s)
            if word_share(text, texts(cited)) >= WORD_SHARE:
                fixed.append(f("cited", "the fragments its words come from"))
                break
        else:
            return None, [f("words", f"{round(before * 100)}% of its words are in its fragments")], []
    if cited != given:
        _cite(op, cited)
    restated = str(op.get("restated_content") or "")
    if restated and (missing_specifics(restated, texts(cited)) or word_share(restated, texts(cited)) < WORD_SHARE):
        fixed.append(f("restated", restated[:40]))     # the core keeps its words; the attach stands
        op.pop("restated_content")
    return op, [], fixed


def _relink(kept: list, moved: dict, dropped: list) -> list:
    """`kept`: [(answer index, op)]; `moved`: answer index -> the index it merged into. target_op follows a merge,
    an operation aimed at one dropped goes too; the indexes end counting the kept list."""
    out = []
    alive = {i for i, _ in kept}
    for i, op in kept:
        t = op.get("target_op")
        if t is not None:
            t = moved.get(t, t)
            if t not in alive or t == i:
                dropped.append(_finding(i, op, "orphan", f"op {t}"))
                continue
            op["target_op"] = t
        out.append((i, op))
    if len(out) < len(kept):
        return _relink(out, moved, dropped)
    pos = {i: n for n, (i, _) in enumerate(out)}
    for _, op in out:
        if op.get("target_op") is not None:
            op["target_op"] = pos[op["target_op"]]
    return out


def _same_aim(a: dict, b: dict) -> bool:
    return all(a.get(k) == b.get(k) for k in ("kind", "target_core_id", "target_op", "redraft_of"))


def check(ops: list, sources: Sources, *, max_tokens: int, chars_per_token: int = CHARS_PER_TOKEN) -> Guarded:
    """One pile's operations (as the answer reader gave them, target_op counting this list), guarded."""
    res, kept = Guarded(), []
    cap_chars = max(1, int(max_tokens)) * chars_per_token
    for i, raw in enumerate(ops):
        op = dict(raw)
        f = functools.partial(_finding, i, op)
        longest = max(len(str(op.get("content") or "")), len(str(op.get("restated_content") or "")))
        if longest > cap_chars:
            res.dropped.append(f("oversize", f"{longest} characters; model.max_tokens {max_tokens} allows {cap_chars}"))
            continue
        if is_placeholder(str(op.get("content") or "")):
            res.dropped.append(f("placeholder", str(op.get("content") or "")[:40]))
            continue
        if op.get("restated_content") is not None and is_placeholder(str(op["restated_content"])):
            res.repaired.append(f("placeholder", str(op.pop("restated_content"))[:40]))
        op, dropped, fixed = _ground(i, op, ops, sources)
        res.dropped += dropped
        res.repaired += fixed
        if op is not None:
            kept.append((i, op))
    kept, moved = _merge_duplicates(kept, res)
    for _, op in kept:
        _warn(op, ops, sources)
    kept = _relink(kept, moved, res.dropped)
    cap = max(1, len(sources.fragments))
    if len(kept) > cap:
        res.dropped += [_finding(i, op, "over_cap", f"{cap} fragment(s)") for i, op in kept[cap:]]
        kept = _relink([(n, op) for n, (_, op) in enumerate(kept[:cap])], {}, res.dropped)
    res.operations = [op for _, op in kept]
    return res


def _merge_duplicates(kept: list, res: Guarded) -> tuple:
    out, moved = [], {}
    for i, op in kept:
        twin = next(((k, other) for k, other in out if near_duplicate(_text_of(op), _text_of(other))), None)
        if twin is None:
            out.append((i, op))
            continue
        k, other = twin
        if _same_aim(op, other):
            if len(str(op.get("content") or "")) > len(str(other.get("content") or "")):
                other["content"] = op["content"]
            _cite(other, _union(other, op))
            res.repaired.append(_finding(i, op, "merged", f"into op {k}"))
        else:
            res.dropped.append(_finding(i, op, "duplicate", f"of op {k}"))
        moved[i] = k
    return out, moved


def drop_repeats(earlier: list, ops: list, fold: bool = False) -> tuple:
    """(ops without those repeating an operation already in the draft, findings): the check across piles. fold:
    the operation kept also cites the fragments of the one dropped, so they land with it (a redraft's twins)."""
    dropped, kept = [], []
    for i, op in enumerate(ops):
        twin = next((k for k, other in enumerate(earlier) if near_duplicate(_text_of(op), _text_of(other))), None)
        if twin is None:
            kept.append((i, op))
            continue
        dropped.append(_finding(i, op, "duplicate", f"of op {twin} of the draft"))
        if fold:
            _cite(earlier[twin], _union(earlier[twin], op))
    return [op for _, op in _relink(kept, {}, dropped)], dropped


def reader_findings(why: Iterable[str], topic: Optional[str] = None) -> list:
    """The answer reader's own drops ("op 3: cites a fragment it was not shown: 'f9'") as findings."""
    out = []
    for w in why or ():
        m = re.match(r"op (\d+): (.*)", str(w))
        i, rest = (int(m.group(1)), m.group(2)) if m else (-1, str(w))
        rule = ("foreign" if rest.startswith("cites a fragment it was not shown")
                else "over_cap" if rest.startswith("over the cap") else "unreadable")
        out.append(Finding(rule, i, rest[:120], "", topic))
    return out


# ------------------------------------------------------------------ the tally the reports carry


def tally(dropped: Iterable[Finding] = (), repaired: Iterable[Finding] = (), into: Optional[dict] = None) -> dict:
    """{"dropped": {rule: n}, "repaired": {rule: n}, "examples": [...]}, added to `into` when given."""
    t = into if into is not None else {"dropped": {}, "repaired": {}, "examples": []}
    for key, found in (("dropped", dropped), ("repaired", repaired)):
        for f in found:
            t[key][f.rule] = t[key].get(f.rule, 0) + 1
            if len(t["examples"]) < EXAMPLES:
                t["examples"].append({"outcome": key, **dataclasses.asdict(f)})
    return t


def merge(a: Optional[dict], b: Optional[dict]) -> dict:
    out = {k: dict(Counter((a or {}).get(k) or {}) + Counter((b or {}).get(k) or {})) for k in ("dropped", "repaired")}
    out["examples"] = (list((a or {}).get("examples") or []) + list((b or {}).get("examples") or []))[:EXAMPLES]
    return out if out["dropped"] or out["repaired"] else {}


def _listed(counts: dict, words: dict) -> str:
    items = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    if len(items) == 1:
        return words.get(items[0][0], items[0][0])
    return ", ".join(f"{words.get(k, k)} ({v})" for k, v in items)


def sentence(t: Optional[dict]) -> str:
    """"12 operations dropped: numbers in none of their fragments (7), ...; 2 repaired: ..." or ""."""
    dropped, repaired = (t or {}).get("dropped") or {}, (t or {}).get("repaired") or {}
    n, m = sum(dropped.values()), sum(repaired.values())
    parts = [f"{n} operation{'' if n == 1 else 's'} dropped: {_listed(dropped, RULES)}" if dropped else "",
             f"{m} repaired ({_listed(repaired, REPAIRS)})" if repaired else ""]
    return "; ".join(p for p in parts if p)
