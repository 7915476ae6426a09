"""Extractive redrafts (pure): in model.write: extractive a denied operation is answered by choosing, not writing.

The answer is {"operations": []} (withdrawn: the critique says it is a duplicate, covered or untrue; not offered
when the critique says what to say, "say: ...") or ONE choice {"words": "f2" | "q1", "kind": ..., "target": "c1"
| null, "also": ["f1"]}, held by the JSON schema to the markers shown. "words" is a fragment of the denied
operation, whose own text becomes the content, or a
wording the critique itself gives ([q1]: its quoted words, or the rest of a line after "say:"): the reviewer is
the main model, who was there, so its words may become the memory word for word. The kind and the target (a
core shown) are chosen as in an extractive draft; "also" cites the fragments it stands on. Nothing the model
writes becomes the memory, so a small model cannot invent a fact in a redraft either.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Optional

from hippocampus.drafting.answer import Parsed, _marker
from hippocampus.drafting.extractive import NEW, TARGETED, _object, _same, aimed, kind_of, words_of
from hippocampus.drafting.extractive import choice_item, parse_choices
from hippocampus.drafting.grounding import _QUOTED, content_words, norm
from hippocampus.drafting.prompt import Markers, _voice, one_line, redraft_material
from hippocampus.drafting.schema import first_fitting

NAME_REEXTRACT = "rechoose_operation"
MAX_WORDINGS = 3
WORDING_CHARS = 300
_CUE = re.compile(r"(?:^|[\s;.(])(?:say|write|use|should (?:say|read)|make it|reword(?: it)?(?: as| to)?|"
                  r"instead|content|wording)\s*:\s*(.+)$", re.I)

RULES = """You are the drafting worker of a memory consolidator, redrafting one operation. You do not write: you choose, and the words you choose become the memory.
The operation below was DENIED by the reviewer: the main model, whose memories these are, and who was there.
Rules:
- THE CRITIQUE IS TRUE. Do exactly what it says.
- Withdraw, by answering {"operations": []}, when the critique says it is a duplicate, already covered, or untrue.
- Otherwise answer ONE choice:
- "words": the critique's own wording ([q1], ...) when it gives one; else the fragment ([f1], ...) whose words say what the critique asks.
- "kind": the kind the critique names; where it is silent, the kind you proposed.
- "target": for attach and supersede the core ([c1], ...) the critique names, else the one you proposed; null for new_core. A wrong target is not a reason to withdraw.
- "also": the fragments it stands on; they are archived with it.
- Use only the markers shown ([f1], [c1], [q1], ...). Never invent one."""

FORMAT = ('Answer with ONE JSON object and nothing else, in this shape:\n'
          '{"operations": [{"words": "q1" or "f2", "kind": "new_core" | "attach" | "supersede", '
          '"target": "c1" or null, "also": ["f1"]}]}  (or {"operations": []} to withdraw)')


@dataclass
class RedraftMarkers(Markers):
    quotes: dict = field(default_factory=dict)     # "q1" -> a wording the critique gives
    withdraw: bool = True                          # False: the critique says what to say, so it is said
    said: Optional[dict] = None                    # then: the choice of its words, read for an answer without one


def wordings(critique: Any) -> list:
    """The wordings a critique gives, in order, each once: its quoted words, and the rest of a line after a cue
    ("say: ...", "write: ..."), without the quotes around it. Only words with some content count."""
    text = norm(critique if isinstance(critique, str) else "")
    out: list = []
    for w in map(_wording, [next(g for g in m.groups() if g) for m in _QUOTED.finditer(text)] + _cued(text)):
        if content_words(w) and w.casefold() not in (o.casefold() for o in out):
            out.append(w)
    return out[:MAX_WORDINGS]


def _wording(w: str) -> str:
    return one_line(w).strip(" \"'“”‘’«»„「」『』")[:WORDING_CHARS].strip()


def tells_what_to_say(critique: Any) -> bool:
    """The critique words the content itself ("say: ..."): the operation is said, not withdrawn."""
    return any(content_words(w) for w in _cued(norm(critique if isinstance(critique, str) else "")))


def _cued(text: str) -> list:
    """The rest of each line after a cue ("say: ...")."""
    return [m.group(1) for m in map(_CUE.search, text.splitlines()) if m]


def _as_choice(op: dict, markers: RedraftMarkers, target: Optional[str]) -> str:
    """The denied operation as the choice that would say it again, where its words are a fragment's or a quote's."""
    said = one_line(op.get("content"))
    words = next((m for m in markers.entries if words_of(markers, m) == said), None)
    words = words or next((q for q, w in markers.quotes.items() if w == said), None)
    if not words:
        return ""
    ids = {v: k for k, v in markers.fragments.items()}
    also = [ids[s] for s in op.get("source_short_ids") or [] if s in ids and ids[s] != words]
    kind = op.get("kind") if op.get("kind") in NEW + TARGETED else "new_core"
    aim = target if target and kind in TARGETED else None
    return "  as a choice: " + json.dumps({"words": words, "kind": kind, "target": aim, "also": also})


def prompt(*, voice_block: str, critique: str, op: dict, earlier: list, entries: list, candidates: list,
           core_chars: int = 600) -> tuple:
    """(the prompt, RedraftMarkers): the critique, the denied operation as a choice, the fragments, the cores, the
    critique's wordings each with the choice that takes it."""
    markers = RedraftMarkers()
    critique = (critique or "").strip()
    material, shown = redraft_material(op, earlier, entries, candidates, markers, core_chars,
                                       "choose the critique's words, with \"also\": []")
    for i, w in enumerate(wordings(critique), 1):
        markers.quotes[f"q{i}"] = w
    markers.withdraw = not (markers.quotes and tells_what_to_say(critique))
    lines = _voice(voice_block) + [RULES, "", "THE CRITIQUE:", critique, ""]
    kind = op.get("kind") or "new_core"
    lines += ["What you proposed:", f"  kind: {kind}", f"  target: [{shown}]" if shown else "  target: (none)",
              f"  content: {one_line(op.get('content'))}"]
    again = _as_choice(op, markers, shown)
    lines += ([again] if again else []) + [""]
    lines += material
    if markers.quotes:
        ids = {v: k for k, v in markers.fragments.items()}
        own = [ids[s] for s in op.get("source_short_ids") or [] if s in ids] or list(markers.fragments)[:1]
        kept = kind if kind in NEW + TARGETED and (shown or kind in NEW) else "new_core"
        use = {"kind": kept, "target": shown if kept in TARGETED else None, "also": own}
        lines += ["", "Wording the critique gives (its words become the memory as they are):"]
        lines += [f"[{q}] {w}\n  to use it: " + json.dumps({"words": q, **use}) for q, w in markers.quotes.items()]
        cued = {_wording(c).casefold() for c in _cued(norm(critique))}
        said = next((q for q, w in markers.quotes.items() if w.casefold() in cued), None)
        markers.said = {"words": said, **use} if said and not markers.withdraw else None
    if not markers.withdraw:
        lines += ["", "The critique says what to say: answer with one choice (withdrawing is not offered)."]
    lines += ["", "The critique, once more:", critique, "", FORMAT, "JSON:"]
    return "\n".join(lines), markers


def _schema(words: list, frags: list, cores: list, also: int, withdraw: bool = True) -> dict:
    if not words:
        return _object({"operations": {"type": "array", "maxItems": 0}})
    others = ({"type": "array", "items": {"enum": frags}, "maxItems": max(0, min(also, len(frags)))} if frags
              else {"type": "array", "maxItems": 0})
    return _object({"operations": {"type": "array", "items": choice_item(words, cores, others), "maxItems": 1,
                                   **({} if withdraw else {"minItems": 1})}})


def schema(markers: RedraftMarkers, max_tokens: int) -> dict:
    """Withdrawn (no choice; not offered when the critique says what to say) or one choice of the words shown,
    citing as many fragments as fit the budget."""
    frags, cores = list(markers.fragments), list(markers.cores)
    words = frags + list(markers.quotes)
    return first_fitting((_schema(words, frags, cores, also, markers.withdraw) for also in range(len(frags), -1, -1)),
                         max_tokens)


def response_format(markers: RedraftMarkers, max_tokens: int) -> dict:
    return {"type": "json_schema", "json_schema": {"name": NAME_REEXTRACT, "schema": schema(markers, max_tokens)}}


def choice(raw: Any, markers: RedraftMarkers) -> tuple:
    """(the operation one choice makes, or None; why it was dropped)."""
    if not isinstance(raw, dict):
        return None, "not an object"
    w = _marker(raw.get("words"), "f")
    if w in markers.quotes:
        content, cited = markers.quotes[w], []
    elif w in markers.fragments:
        content, cited = words_of(markers, w), [w]
    else:
        return None, f"chooses words it was not shown: {str(raw.get('words'))[:40]!r}"
    if not content:
        return None, f"{w} has no words"
    kind = kind_of(raw)
    if kind not in NEW + TARGETED:
        return None, f"unknown kind {kind[:30]!r}"
    core, why = aimed(raw, kind, markers, cited)
    if why:
        return None, why
    whose = f"the critique's words [{w}]" if w in markers.quotes else f"the words of [{w}]"
    op = {"kind": kind, "content": content, "target_core_id": markers.cores[core] if core else None,
          "source_short_ids": [markers.fragments[m] for m in cited], "evidence_count": max(1, len(cited)),
          "rationale": f"chosen, not written: {whose}" + (f", {kind} of [{core}]" if core else "")}
    return {k: v for k, v in op.items() if v is not None}, None


def parse(text: str, *, finish_reason: Optional[str], markers: RedraftMarkers, max_tokens: int,
          redraft_of: Optional[int] = None, core_texts: Optional[dict] = None, constrained: bool = False) -> Parsed:
    """The operation one answer chooses (none: withdrawn); never raises. core_texts: marker -> the core's text."""
    def build(raw: list) -> tuple:
        if not raw and getattr(markers, "said", None):     # a withdrawal, not offered: the critique's words are said
            raw = [markers.said]
        ops, dropped = [], []
        for i, item in enumerate(raw):
            op, why = choice(item, markers)
            if op is not None and ops:
                why, op = "a redraft answers with one choice", None
            if op is not None and op["kind"] == "new_core" and any(_same(op["content"], t)
                                                                    for t in (core_texts or {}).values()):
                why, op = "a new_core that restates a shown core", None
            if op is None:
                dropped.append(f"op {i}: {why}")
                continue
            if redraft_of is not None:
                op["redraft_of"] = redraft_of
            ops.append(op)
        return ops, dropped
    return parse_choices(text, finish_reason=finish_reason, markers=markers, max_tokens=max_tokens,
                         constrained=constrained, build=build)
