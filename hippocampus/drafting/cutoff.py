"""Why an answer was cut off at model.max_tokens before its first operation was complete, in words (pure).

"max_tokens is too low" is said only when that is the cause: the model was writing an operation of a sane
size and ran out of room. An answer that never started the JSON, spent its tokens thinking, came back empty,
ran on in one field, or (held to the schema) padded the JSON with whitespace is named for what it did.
"""
from __future__ import annotations

import re

RUN_ON_CHARS = 1200        # one unclosed field longer than this is a run-on, not a small budget
_STRING_TAIL = re.compile(r'"((?:[^"\\]|\\.)*)$', re.S)
THINKING_OFF = "turn thinking off (model.extra_body: chat_template_kwargs: enable_thinking: false)"


def _open_string(body: str) -> int:
    """The length of the string the answer was writing when it stopped (0: it stopped between fields)."""
    if body.count('"') % 2 == 0:
        return 0
    m = _STRING_TAIL.search(body)
    return len(m.group(1)) if m else 0


def why(raw: str, body: str, max_tokens, constrained: bool, thought: bool) -> str:
    """The failure for an answer cut off with no operation complete. `raw` is the answer as sent, `body` the
    answer without its think block and code fences, `thought` whether it had a think block."""
    head = f"the answer was cut off at model.max_tokens ({max_tokens}) before the first operation was complete"
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
        return (f"the answer came back empty after model.max_tokens ({max_tokens}) tokens: the server spent "
                f"them where it does not return them (a reasoning channel); {THINKING_OFF} or raise "
                "model.max_tokens")
    if thought and not body:
        return (f"the model spent all model.max_tokens ({max_tokens}) tokens thinking and never wrote the "
                f"JSON: {THINKING_OFF}, or raise model.max_tokens")
    if '"operations"' not in body and '"kind"' not in body:
        return (f"the model wrote {len(body)} characters up to model.max_tokens ({max_tokens}) without "
                f"starting the JSON asked for ({body[:80]!r}): it is not following the prompt; "
                "model.structured: auto (or on) holds a server that can constrain it to the JSON")
    run_on = _open_string(body)
    if run_on > RUN_ON_CHARS:
        return (f"{head}: one field ran on for {run_on} characters without closing; model.structured: auto "
                "(or on) bounds every field's length on a server that can constrain it")
    return f"{head}: model.max_tokens ({max_tokens}) is too low for this model's answers; raise model.max_tokens"
