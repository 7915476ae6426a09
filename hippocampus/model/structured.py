"""model.structured: whether a drafting call sends its answer's JSON schema (`response_format` json_schema).

auto (the default) sends it until a server refuses it (a 400 naming response_format, json_schema or a
grammar), then the plain prompt: remembered on the model's client for this process only (model.learned), so a
restart asks again (the server may have been upgraded). on sends it always (a refusal is a model failure); off
never.
"""
from __future__ import annotations

import json
import logging
from typing import Optional

from hippocampus.config import redact

log = logging.getLogger(__name__)
REFUSAL_WORDS = ("response_format", "json_schema", "json schema", "grammar", "guided_")


def names_the_format(status: int, body: str) -> bool:
    low = (body or "").lower()
    return status == 400 and any(w in low for w in REFUSAL_WORDS)


def wanted(mode: str, refused: Optional[str]) -> bool:
    """refused: what the server said when it refused the schema (model.learned), if it did."""
    return mode == "on" or (mode != "off" and refused is None)


def said(body: str) -> str:
    """The server's own message out of an error body ({"error": {"message": ...}} or {"error": "..."})."""
    try:
        err = json.loads(body).get("error")
    except (ValueError, AttributeError):
        return (body or "").strip()[:200]
    msg = err.get("message") if isinstance(err, dict) else err
    return str(msg if msg else body).strip()[:200]


def view(mode: str, refused: Optional[str]) -> dict:
    """For /status."""
    return {"mode": mode, "refused": refused if mode == "auto" else None}


def remember_refusal(learned, url: str, said: str) -> None:
    if learned.remember("refused", said[:200]):
        log.warning("the model at %s refused response_format (%s): drafting calls go without the JSON schema "
                    "from now on (model.structured: auto); a restart tries it again", redact.url(url.rstrip("/")),
                    said[:200])


def refusal_failure(url: str, said: str) -> str:
    return (f"the model at {redact.url(url)} refused the answer's JSON schema (response_format): {said[:160]!r}; "
            "model.structured is on, so nothing was drafted: set model.structured: auto (falls back to the "
            "plain prompt) or off for this server")
