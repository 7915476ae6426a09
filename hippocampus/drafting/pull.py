"""The brief pull (sleep.brief_pull, a headless install): its prompt, the JSON schema its answer is held to (sent as
`response_format`, sized like the drafts') and the reading of that answer as JSON (pure, never raises).
"""
from __future__ import annotations

from hippocampus.drafting.answer import clean, json_value
from hippocampus.drafting.schema import _largest_share, _object, _scaled, _text, within

FULL = {"summary": 1200, "hints": 8, "hint": 40}
LEAST = {"summary": 40, "hints": 2, "hint": 12}
# the fragments the prompt shows and the characters of each; the hints and the summary's characters kept of an
# answer a server did not hold to the schema
SHOWN, SHOWN_CHARS, KEPT_HINTS, KEPT_SUMMARY = 50, 200, 12, 2000
PROMPT = """You are a steering assistant for a memory consolidator. Below are short-term memory fragments.
Write a brief for tonight's sleep: what mattered, which running topics deserve long-term memory
(promote_hints: short phrases copied word for word from the fragments or their topic tags) and which
are one-offs (noise_hints). Answer with exact JSON only:
{"summary": "...", "promote_hints": ["..."], "noise_hints": ["..."], "completed_intents": []}

Fragments:
%s

JSON brief:"""


def prompt(shorts: list) -> str:
    return PROMPT % "\n".join(f"[{(s.get('metadata') or {}).get('topic') or 'untagged'}] "
                              f"{s.get('content', '')[:SHOWN_CHARS]}" for s in shorts)


def _schema(share: float) -> dict:
    size = _scaled(share, FULL, LEAST)
    hints = {"type": "array", "items": _text(size["hint"]), "maxItems": size["hints"]}
    props = {"summary": _text(size["summary"], 1), "promote_hints": hints, "noise_hints": hints,
             "completed_intents": {"type": "array", "items": _text(64), "maxItems": 0}}
    return _object(props)


def response_format(max_tokens: int) -> dict:
    """The pulled brief's `response_format`: its longest answer within SHARE of model.max_tokens."""
    def fits(share: float) -> bool:
        return within(_schema(share), max_tokens)
    return {"type": "json_schema", "json_schema": {"name": "pulled_brief",
                                                   "schema": _schema(1.0 if fits(1.0) else _largest_share(fits))}}


def read(text: str, cut_off: bool = False) -> tuple:
    """(the brief's summary and hints, None) from the answer as the JSON object asked for (a think block, a fence or
    prose around it set aside), or (None, what was wrong with it, completing "the pulled brief was ...")."""
    data = json_value(clean(text))
    if not isinstance(data, dict):
        return None, f"not the JSON asked for{' (cut off at model.max_tokens)' if cut_off else ''}: {text[:160]!r}"
    if not isinstance(data.get("summary"), str) or not data["summary"].strip():
        return None, "written with no summary"
    hints = {k: [str(h) for h in data[k] if isinstance(h, (str, int))][:KEPT_HINTS]
             if isinstance(data.get(k), list) else [] for k in ("promote_hints", "noise_hints")}
    return {"summary": data["summary"][:KEPT_SUMMARY], **hints}, None
