"""model.structured: whether a drafting call sends its answer's JSON schema (`response_format` json_schema).

auto (the default) sends it until a server refuses it (a 400 naming response_format, json_schema or a
grammar), then the plain prompt: remembered per model URL for this process only, so a restart asks again
(the server may have been upgraded). on sends it always (a refusal is a model failure); off never.
"""
from __future__ import annotations

import json
import logging
import threading
from typing import Optional

from hippocampus.config import redact

log = logging.getLogger(__name__)
REFUSAL_WORDS = ("response_format", "json_schema", "json schema", "grammar", "guided_")

_lock = threading.Lock()
_refused: dict = {}            # model URL -> what the server said


def names_the_format(status: int, body: str) -> bool:
    low = (body or "").lower()
    return status == 400 and any(w in low for w in REFUSAL_WORDS)


def wanted(mode: str, url: str) -> bool:
    return mode == "on" or (mode != "off" and refused(url) is None)


def refused(url: str) -> Optional[str]:
    """What the server at this URL said when it refused the schema, if it did."""
    with _lock:
        return _refused.get(url.rstrip("/"))


def said(body: str) -> str:
    """The server's own message out of an error body ({"error": {"message": ...}} or {"error": "..."})."""
    try:
        err = json.loads(body).get("error")
    except (ValueError, AttributeError):
        return (body or "").strip()[:200]
    msg = err.get("message") if isinstance(err, dict) else err
    return str(msg if msg else body).strip()[:200]


def view(mode: str, url: str) -> dict:
    """For /status."""
    return {"mode": mode, "refused": refused(url) if mode == "auto" else None}


def remember_refusal(url: str, said: str) -> None:
    key = url.rstrip("/")
    with _lock:
        first = key not in _refused
        _refused[key] = said[:200]
    if first:
        log.warning("the model at %s refused response_format (%s): drafting calls go without the JSON schema "
                    "from now on (model.structured: auto); a restart tries it again", redact.url(key), said[:200])


def refusal_failure(url: str, said: str) -> str:
    return (f"the model at {redact.url(url)} refused the answer's JSON schema (response_format): {said[:160]!r}; "
            "model.structured is on, so nothing was drafted: set model.structured: auto (falls back to the "
            "plain prompt) or off for this server")
