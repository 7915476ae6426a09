"""The JSON schema of the answers the drafting prompts ask for, sent as `response_format` (pure): a server that
constrains its output is held to the kinds offered, the markers shown, bounded counts and lengths, and the longest
answer allowed stays within SHARE of model.max_tokens (the margin is for whitespace the grammar does not fix).
"""
from __future__ import annotations

import bisect
import math
from typing import Any, Iterable

from hippocampus.drafting.prompt import Markers

NAME_DRAFT, NAME_REDRAFT = "draft_operations", "redraft_operations"
KINDS = ("new_core", "attach", "supersede")
CHARS_PER_TOKEN = 4
SHARE = 0.75               # of model.max_tokens, for the longest answer the schema allows
KEY_TOKENS = 5             # one key with its quotes, the colon and the comma
VALUE_TOKENS = 2           # a string's quotes, a number, null, a bracket pair
MAX_OPERATIONS = 8
UNBOUNDED = 1 << 20        # a budget no schema of ours reaches: its full lengths
STEPS = 1 << 20            # the shares a field's lengths are scaled by: k / STEPS
FLOOR = 128                # no pile's answer cap is below this (a server that does not hold the answer to the schema)
FULL = {"content": 300, "topic": 60, "rationale": 160}     # the lengths when the budget allows them
LEAST = {"content": 24, "topic": 12, "rationale": 12}      # never below: an operation needs some words


def estimate_tokens(value: Any) -> int:
    """A generous count of the tokens a JSON value takes."""
    if isinstance(value, dict):
        return VALUE_TOKENS + sum(KEY_TOKENS + estimate_tokens(v) for v in value.values())
    if isinstance(value, list):
        return VALUE_TOKENS + sum(1 + estimate_tokens(v) for v in value)
    if isinstance(value, str):
        return VALUE_TOKENS + math.ceil(len(value) / CHARS_PER_TOKEN)
    return VALUE_TOKENS


def within(schema: dict, max_tokens: int) -> bool:
    """Whether the longest answer `schema` allows is within SHARE of max_tokens."""
    return estimate_tokens(worst_case(schema)) <= int(max(16, int(max_tokens)) * SHARE)


def first_fitting(schemas: Iterable[dict], max_tokens: int) -> dict:
    """The first of `schemas` (one at least, largest first) whose longest answer is within SHARE of max_tokens,
    else the last, the smallest."""
    for s in schemas:
        if within(s, max_tokens):
            break
    return s


def _scaled(share: float, full: dict = FULL, least: dict = LEAST) -> dict:
    return {k: max(least[k], int(full[k] * share)) for k in full}


def _largest_share(fits) -> float:
    """The largest share of the full lengths in [0, 1), in steps of 1/STEPS, that fits (0 if none), by bisection."""
    fitting = bisect.bisect(range(STEPS), False, key=lambda k: not fits(k / STEPS))
    return max(0, fitting - 1) / STEPS


def sizes(max_tokens: int, n_fragments: int, n_cores: int, redraft: bool = False) -> tuple:
    """(operations, lengths, cited): as many operations at full lengths as fit (up to the reader's own cap), else
    one with shorter fields; cited, the most fragments one operation may list, is fewer than shown only in a tight
    budget."""
    cap = max(1, min(MAX_OPERATIONS, n_fragments + 1 if redraft else n_fragments))   # a draft: one per fragment

    def fits(ops: int, lengths: dict, cited: int = n_fragments) -> bool:
        return within(_schema(ops, lengths, cited, n_fragments, n_cores, redraft), max_tokens)

    ops = next((n for n in range(cap, 0, -1) if fits(n, FULL)), 0)
    if ops:
        return ops, FULL, n_fragments
    # a big pile in a small budget: fewer citations per operation
    cited = next((c for c in range(n_fragments, 1, -1) if fits(1, LEAST, c)), min(1, n_fragments))
    share = _largest_share(lambda mid: fits(1, _scaled(mid), cited))   # one operation, fields that fit
    return 1, _scaled(share), cited


def _text(max_chars: int, least: int = 0) -> dict:
    return {"type": "string", "maxLength": int(max_chars), **({"minLength": least} if least else {})}


def _schema(ops: int, lengths: dict, cited: int, n_fragments: int, n_cores: int, redraft: bool) -> dict:
    frag_markers = [f"f{i}" for i in range(1, n_fragments + 1)]
    core_markers = [f"c{i}" for i in range(1, n_cores + 1)]
    fragments: dict = {"type": "array", "maxItems": min(len(frag_markers), cited)}
    if frag_markers:
        fragments["items"] = {"enum": frag_markers}
        if not redraft:                        # a redraft may stand on its own operation's fragments
            fragments["minItems"] = 1
    else:
        fragments["items"] = {"type": "string", "maxLength": 0}
    op: dict = {
        "kind": {"enum": list(KINDS)},
        "content": _text(lengths["content"], 1),
        "topic": _text(lengths["topic"]),
        "fragments": fragments,
        "target": {"enum": core_markers + [None]} if core_markers else {"type": "null"},
        "target_op": ({"anyOf": [{"type": "integer", "minimum": 0, "maximum": ops - 2},
                                 {"type": "null"}]} if ops > 1 else {"type": "null"}),
    }
    if not redraft:                            # a redraft never restates a core
        op["restated_content"] = {"anyOf": [_text(lengths["content"], 1), {"type": "null"}]}
    op["rationale"] = _text(lengths["rationale"])
    return _object({"operations": {"type": "array", "items": _object(op), "maxItems": ops}})


def _object(props: dict) -> dict:
    """A JSON object of exactly these properties, each required."""
    return {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}


def answer_schema(markers: Markers, max_tokens: int, redraft: bool = False) -> dict:
    n_frag, n_cores = len(markers.fragments), len(markers.cores)
    return _schema(*sizes(max_tokens, n_frag, n_cores, redraft), n_frag, n_cores, redraft)


def cap_for(worst_tokens: int, ceiling: int) -> int:
    """The max_tokens of a call whose longest allowed answer is `worst_tokens`: that with SHARE's margin (and at
    least FLOOR), never above model.max_tokens (`ceiling`), the ceiling every cap keeps."""
    cap = max(FLOOR, math.ceil(worst_tokens / SHARE))
    while int(cap * SHARE) < worst_tokens:
        cap += 1
    return max(1, min(int(ceiling), cap))


def answer_cap(markers: Markers, ceiling: int, redraft: bool = False) -> int:
    """The answer's max_tokens for this pile: the longest answer its schema allows at full lengths, with SHARE's
    margin, or model.max_tokens (`ceiling`) where that is less (the schema is then sized to it, as before)."""
    return cap_for(estimate_tokens(worst_case(answer_schema(markers, UNBOUNDED, redraft))), ceiling)


def response_format(markers: Markers, max_tokens: int, redraft: bool = False) -> dict:
    return {"type": "json_schema",
            "json_schema": {"name": NAME_REDRAFT if redraft else NAME_DRAFT,
                            "schema": answer_schema(markers, max_tokens, redraft)}}


def worst_case(schema: dict) -> Any:
    """The longest answer one (sub)schema of ours allows."""
    if "anyOf" in schema:
        return max((worst_case(s) for s in schema["anyOf"]), key=estimate_tokens)
    if "enum" in schema:
        return max(schema["enum"], key=lambda v: estimate_tokens(v) if v is not None else 0)
    kind = schema.get("type")
    if kind == "object":
        return {k: worst_case(v) for k, v in schema["properties"].items()}
    if kind == "array":
        return [worst_case(schema["items"]) for _ in range(schema.get("maxItems", 0))]
    if kind == "string":
        return "x" * schema.get("maxLength", 0)
    if kind == "integer":
        return schema.get("maximum", 0)
    return None

