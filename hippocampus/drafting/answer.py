"""Reading the drafting worker's answer (pure, never raises): lenient about the wrapping (think blocks, fences,
prose, trailing commas, an answer cut off mid-list), strict about the content (only the markers it was shown).
Of an answer cut off the finished operations are kept; cut off before its first, the failure says why.
"""
from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from hippocampus.drafting.prompt import Markers
from hippocampus.drafting.schema import FULL
from hippocampus.transport_words import in_words

log = logging.getLogger(__name__)

KINDS = ("new_core", "attach", "supersede", "verbatim")
RATIONALE_CHARS = 500
TOPIC_CHARS = FULL["topic"]    # the schema's cap, for a free-text answer too
RUN_ON_CHARS = 1200        # one unclosed field longer than this is a run-on, not a small budget
THINKING_OFF = "turn thinking off (model.extra_body: chat_template_kwargs: enable_thinking: false)"
SCAFFOLDING = ("Source fragments", "Fragments:", "Existing cores:", "THE CRITIQUE", "The critique, once more",
               "What you proposed", "Earlier versions:", "Other operations in this draft", "Previous content:",
               "Critique:", "Steer:", "Topic:", "JSON:", "Operation kind:", "Target core:")
_THINK = re.compile(r"<think>.*?(</think>|\Z)", re.S | re.I)
_FENCE = re.compile(r"^\s*```[\w-]*\s*$", re.M)
_TRAILING = re.compile(r",\s*([\]}])")
_STRING_TAIL = re.compile(r'"((?:[^"\\]|\\.)*)$', re.S)
_OPS_KEY = re.compile(r'"operations"[\s:]*')
_GAP = re.compile(r"[\s,]*")
_DECODER = json.JSONDecoder(strict=False)
_NONE = ("", "null", "none", "n/a")
_LEAD_MARKER = re.compile(r"^\s*[fc]\d+\s*:")            # "f1: Likes fish" (not "F1: Verstappen won")
_INLINE_MARKER = re.compile(r"\s*(?:\[\s*(?i:[fc]\d+(?:\s*[,;]\s*[fc]\d+)*)\s*\]"    # "Likes fish [f1]." or
                            r"|\(\s*[fc]\d+(?:\s*[,;]\s*[fc]\d+)*\s*\))")     # [f1, f2], (f1): the memory is without it


@dataclass
class Parsed:
    operations: list = field(default_factory=list)
    cut_off: bool = False
    dropped: list = field(default_factory=list)
    failure: Optional[str] = None


def strip_scaffolding(text: str) -> tuple:
    """Cut at the first line that starts with a prompt heading; (text, cut?)."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if line.lstrip().startswith(SCAFFOLDING):
            return "\n".join(lines[:i]).strip(), True
    return text.strip(), False


def clean(text: str) -> str:
    text = _THINK.sub("", text)
    if "</think>" in text.lower():  # an opening tag the server ate
        text = text[text.lower().rfind("</think>") + len("</think>"):]
    return _FENCE.sub("", text).strip()


def _loads(text: str) -> Any:
    """A JSON value, as is or without trailing commas; None if neither."""
    for attempt in (text, _TRAILING.sub(r"\1", text)):
        try:
            return _DECODER.decode(attempt)
        except (ValueError, RecursionError):
            continue
    return None


def json_value(body: str) -> Any:
    """A cleaned answer as JSON: the whole of it, else the span from its first { to its last }; None if neither."""
    a, b = body.find("{"), body.rfind("}")
    obj = _loads(body)
    return _loads(body[a:b + 1]) if obj is None and 0 <= a < b else obj


def _balanced_end(s: str, i: int) -> Optional[int]:
    """The index after the bracket closing the one at s[i], or None (ran off the end)."""
    depth, in_str, esc = 0, False, False
    for j, ch in enumerate(s[i:], i):
        if esc:
            esc = False
        elif in_str:
            esc, in_str = ch == "\\", ch != '"'
        elif ch == '"':
            in_str = True
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
            if depth == 0:
                return j + 1
    return None


def salvage(text: str) -> tuple:
    """(objects, found, cut_off) from the "operations" list, one element at a time; one complete but not readable
    is None in its place (the reader drops it), so the rest are kept and their places still count."""
    key = _OPS_KEY.search(text)
    if key is None:
        return [], False, False
    i = key.end()
    if i >= len(text):
        return [], True, True
    if text[i] != "[":
        return [], False, False
    i += 1
    out: list = []
    while True:
        i = _GAP.match(text, i).end()
        if i >= len(text):
            return out, True, True
        if text[i] == "]":
            return out, True, False
        try:
            obj, i = _DECODER.raw_decode(text, i)
        except (ValueError, RecursionError):
            end = _balanced_end(text, i) if text[i] in "{[" else None
            if end is None:
                return out, True, True
            obj, i = _loads(text[i:end]), end     # complete but unreadable: None, dropped as not an object
        out.append(obj)


def _marker(value: Any, prefix: str, numbered: bool = True) -> Optional[str]:
    """A marker as written ("f2", "[F2]"), lower-cased; a bare number (2, "2") is the prefix's where `numbered` (a
    draft's core target is not: a number there is no core marker)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{prefix}{value}" if numbered else None
    if not isinstance(value, str):
        return None
    v = value.strip().strip("[]()").strip().lower()
    return f"{prefix}{int(v)}" if numbered and _whole(v) else v


def _whole(v: str) -> bool:
    """A run of decimal digits int() reads (not '²', not past its 4,300 digits): no marker or index is longer."""
    return v.isdecimal() and len(v) <= 20


def _fragments(raw: Any, markers: Markers) -> tuple:
    """(short ids, error): the op's cited fragments, distinct, in order."""
    if isinstance(raw, str):
        raw = [p for p in re.split(r"[,\s]+", raw) if p]
    raw = [] if raw is None else raw
    if not isinstance(raw, list):
        return None, "fragments is not a list"
    ids: list = []
    for item in raw:
        m = _marker(item, "f")
        if m not in markers.fragments:
            return None, f"cites a fragment it was not shown: {str(item)[:40]!r}"
        if markers.fragments[m] not in ids:
            ids.append(markers.fragments[m])
    return ids, None


def _target(op: dict, markers: Markers) -> tuple:
    """(core id, target_op, error) for an attach or supersede."""
    raw = op.get("target", op.get("target_core_id"))
    if isinstance(raw, str) and raw.strip().lower() in _NONE:
        raw = None
    if raw is not None:
        m = _marker(raw, "c", numbered=False)
        if m in markers.cores:
            return markers.cores[m], None, None
        if isinstance(raw, str) and raw.strip() in markers.cores.values():
            return raw.strip(), None, None
    t = op.get("target_op")
    if isinstance(t, str) and _whole(t.strip()):
        t = int(t.strip())
    if isinstance(t, int) and not isinstance(t, bool) and t >= 0:
        return None, t, None
    if raw is not None:
        return None, None, f"targets a core it was not shown: {str(raw)[:40]!r}"
    return None, None, "attach/supersede without a target"


def _text(value: Any) -> str:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return value if isinstance(value, str) else ""


def _unmark(text: str) -> str:
    """The text without the markers written into it, nor what they leave: "[f1]: x" is "x", "x ([f1])" "x"."""
    out = _INLINE_MARKER.sub("", _LEAD_MARKER.sub("", text))
    if out != text:
        out = re.sub(r"\s*(?:\(\s*\)|\[\s*\])", "", out)         # a dash goes only as a dash: -5 keeps its minus
        out = re.sub(r"^(?:[\s:;,]|[-–—](?=\s))+|(?:[\s:;,]|(?<=\s)[-–—])+$", "", out)
    return out.strip()


def validate(raw: Any, markers: Markers, redraft_of: Optional[int]) -> tuple:
    """(Memory-ready op or None, why dropped)."""
    if not isinstance(raw, dict):
        return None, "not an object"
    kind = _text(raw.get("kind")).strip().lower().replace("-", "_").replace(" ", "_")
    if kind not in KINDS:
        return None, f"unknown kind {kind[:30]!r}"
    if kind == "verbatim":  # word for word is the reviewer's mark, never the worker's
        kind = "new_core"
    if redraft_of is not None and not markers.fragments:
        ids: list = []  # its fragments are gone; the caller keeps the old sources
    else:
        cited = raw.get("fragments", raw.get("source_indexes"))
        if redraft_of is not None and not cited:   # a redraft stands on its own operation's fragments
            cited = list(markers.fragments)
        ids, err = _fragments(cited, markers)
        if err or not ids:
            return None, err or "cites no fragment"
    target_core_id = target_op = None
    if kind in ("attach", "supersede"):
        target_core_id, target_op, err = _target(raw, markers)
        if err:
            return None, err
    content = _unmark(strip_scaffolding(_text(raw.get("content")))[0])
    restated = _unmark(strip_scaffolding(_text(raw.get("restated_content")))[0]) or None
    if redraft_of is not None:  # a redraft never rewords a core
        content, restated = content or (restated or ""), None
    if kind != "attach" or restated == content:
        restated = None
    if not content and not restated:
        return None, "no content"
    topic = _text(raw.get("topic")).strip()[:TOPIC_CHARS].rstrip(" ,") or None
    rationale = _text(raw.get("rationale")).strip()[:RATIONALE_CHARS] or None
    op = {"kind": kind, "content": content, "topic": topic, "target_core_id": target_core_id,
          "target_op": target_op, "source_short_ids": ids, "evidence_count": len(ids),
          "rationale": rationale, "restated_content": restated, "redraft_of": redraft_of}
    return {k: v for k, v in op.items() if v is not None}, None


def _link(kept: list, dropped: list) -> list:
    """Keep only target_op pointing at another surviving new_core."""
    cores = {i for i, op in kept if op["kind"] == "new_core"}
    out = []
    for i, op in kept:
        t = op.get("target_op")
        if t is not None and (t == i or t not in cores):
            dropped.append(f"op {i}: target_op {t} is not another new_core in this answer")
            continue
        out.append((i, op))
    return out


def _operations(raw_ops: list, markers: Markers, redraft_of: Optional[int], dropped: list) -> list:
    kept = []
    for i, raw in enumerate(raw_ops):
        op, why = validate(raw, markers, redraft_of)
        if op is None:
            dropped.append(f"op {i}: {why}")
        else:
            kept.append((i, op))
    kept = _link(kept, dropped)
    cap = len(markers.fragments) + 1
    if len(kept) > cap:
        dropped.extend(f"op {i}: over the cap of {cap} operations" for i, _ in kept[cap:])
        kept = _link(kept[:cap], dropped)
    pos = {i: n for n, (i, _) in enumerate(kept)}
    for _, op in kept:
        if "target_op" in op:
            op["target_op"] = pos[op["target_op"]]
    return [op for _, op in kept]


def _raw_ops(obj: Any) -> list:
    if isinstance(obj, list):
        return obj
    ops = obj.get("operations")
    if ops is None and "kind" in obj:  # one operation, unwrapped
        return [obj]
    if isinstance(ops, dict):
        return [ops]
    return ops if isinstance(ops, list) else []


def cap_words(max_tokens, ceiling: Optional[int] = None) -> str:
    """The cap an answer ran into, named: model.max_tokens, or the pile's own cap below it."""
    if ceiling is None or int(max_tokens) >= int(ceiling):
        return f"model.max_tokens ({max_tokens})"
    return f"the pile's answer cap ({max_tokens} tokens, sized to its pile; model.max_tokens {ceiling} is the ceiling)"


def cut_off_why(raw: str, body: str, max_tokens, constrained: bool, ceiling: Optional[int] = None) -> str:
    """The failure of an answer cut off with no operation complete; `body` is `raw` cleaned; `ceiling`:
    model.max_tokens, when the call's cap (`max_tokens`) was sized to its pile."""
    cap = cap_words(max_tokens, ceiling)
    head = f"the answer was cut off at {cap} before the first operation was complete"
    if constrained:
        spaces = sum(ch.isspace() for ch in body)
        if body and spaces * 2 > len(body):
            return (f"{head}: held to the answer's schema (sized to end within that), it spent {spaces} of its "
                    f"{len(body)} characters on whitespace between the fields; raise model.max_tokens to "
                    "give such a model room, or try another model")
        return (f"{head}: held to the answer's schema (sized to end within that), it wrote {len(body)} "
                "characters, far longer than the words it was allowed; its tokens are short ones (escapes, "
                "single letters): raise model.max_tokens to give such a model room, or try another model")
    if not raw.strip():
        return (f"the answer came back empty after {cap} tokens: the server spent "
                f"them where it does not return them (a reasoning channel); {THINKING_OFF} or raise "
                "model.max_tokens")
    if "think>" in raw.lower() and not body:
        return (f"the model spent all {cap} tokens thinking and never wrote the "
                f"JSON: {THINKING_OFF}, or raise model.max_tokens")
    if '"operations"' not in body and '"kind"' not in body:
        return (f"the model wrote {len(body)} characters up to {cap} without "
                f"starting the JSON asked for ({body[:80]!r}): it is not following the prompt; "
                "model.structured: auto (or on) holds a server that can constrain it to the JSON")
    tail = _STRING_TAIL.search(body) if body.count('"') % 2 else None   # the string it stopped in
    if tail and len(tail.group(1)) > RUN_ON_CHARS:
        return (f"{head}: one field ran on for {len(tail.group(1))} characters without closing; model.structured: "
                "auto (or on) bounds every field's length on a server that can constrain it")
    return f"{head}: {cap} is too low for this model's answers; raise model.max_tokens"


def read_raw(text: Any, finish_reason: Optional[str], max_tokens: int, constrained: bool,
             single: Any = None, ceiling: Optional[int] = None) -> tuple:
    """(the raw operations, cut off, why nothing could be read or None) of one answer: the whole answer as JSON,
    else the span from its first { to its last }, else what salvage finds. `single(obj)`: the object is one
    operation on its own."""
    raw_text = text if isinstance(text, str) else ""
    body = clean(raw_text)
    cut = finish_reason == "length"
    obj = json_value(body)
    if isinstance(obj, (dict, list)):
        if single is not None and single(obj):
            return [obj], cut, None
        if isinstance(obj, dict) and "operations" not in obj and "kind" not in obj:    # {"draft": {"operations": []}}
            nested, found, _ = salvage(body)
            if found and nested:
                return nested, cut, None
        return _raw_ops(obj), cut, None
    raw, found, ran_off = salvage(body)
    cut = cut or ran_off
    if not raw and not (found and not cut):
        return [], cut, (cut_off_why(raw_text, body, max_tokens, constrained, ceiling) if cut
                         else f"the model's answer was not the JSON asked for: {raw_text[:160]!r}")
    return raw, cut, None


def parse_answer(text: str, *, finish_reason: Optional[str], markers: Markers, max_tokens: int,
                 redraft_of: Optional[int] = None, constrained: bool = False,
                 ceiling: Optional[int] = None) -> Parsed:
    """The operations read from one answer; `constrained`: it was held to the answer's schema."""
    def build(raw: list) -> tuple:
        dropped: list = []
        return _operations(raw, markers, redraft_of, dropped), dropped
    return parse_with(build, text, finish_reason, max_tokens, constrained, ceiling=ceiling)


def parse_with(build: Callable[[list], tuple], text: str, finish_reason: Optional[str], max_tokens: int,
               constrained: bool, single: Any = None, ceiling: Optional[int] = None) -> Parsed:
    """The operations `build(the raw operations)` -> (operations, dropped) makes of one answer (read_raw reads it;
    `single` as there); never raises on a model's answer."""
    try:
        raw, cut, why = read_raw(text, finish_reason, max_tokens, constrained, single, ceiling)
        if why is not None:
            return Parsed([], cut, [], why)
        ops, dropped = build(raw)
        return Parsed(ops, cut, dropped, None)
    except Exception as exc:  # never raise on a model's answer
        log.exception("reading the model's answer raised")
        return Parsed([], finish_reason == "length", [], f"could not read the model's answer: {in_words(exc)}"[:300])
