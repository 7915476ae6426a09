"""Is Memory answering, is the model answering, what waits for review: plain reads, run on the watch
actors' beat (actors/watch.py) and published to the board, so no request waits on any of them. A read that
fails keeps what the last good one saw, with when that was ("as of"): nothing shown is older than it says."""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Optional

import requests

from hippocampus import outbound, transport_words
from hippocampus.config import redact
from hippocampus.cycle.chains import CLOSE, REDRAFT, plan
from hippocampus.memory import MemoryError_, NotSerenMemory
from hippocampus.model import answers

MEMORY_FIRST = {"reachable": None, "error": None, "checked_at": 0.0, "up_at": None}
MODEL_FIRST = {"answering": None, "error": None, "not_model": False, "checked_at": 0.0}
MODEL_LIST_CAP = 256 * 1024
QUEUE_FIRST = {"drafts": [], "redrafts": [], "landed": [], "briefs": None, "error": None, "checked_at": None,
               "as_of": None}


def memory_health(memory, last: Optional[dict] = None) -> dict:
    """Is Memory answering; `up_at`: when it last did (this read, or the last good one's)."""
    now = time.time()
    try:
        memory.health()
        reachable, error, other = True, None, False
    except MemoryError_ as exc:
        reachable, error, other = False, redact.text(str(exc)), isinstance(exc, NotSerenMemory)
    return {"reachable": reachable, "error": error, "not_memory": other, "checked_at": now,
            "up_at": now if reachable else (last or {}).get("up_at")}


def pending_drafts(memory, last: Optional[dict] = None, limit: int = 50, chains: bool = True) -> dict:
    """What waits for review (the queue), the chains whose denials wait for a redraft and those that landed (their
    latest drafts' ids; only with `chains`: before a check has read them) and the open briefs' ids; Memory down:
    the last good read's, with `as_of` its time and `error` why this one failed."""
    now = time.time()
    try:
        drafts = memory.drafts("pending", limit=limit)
        reviewed = memory.drafts("reviewed", limit=limit) if chains else []
        briefs = [b.get("id") for b in memory.open_briefs(limit=limit) if isinstance(b, dict)]
    except MemoryError_ as exc:
        last = {**QUEUE_FIRST, **(last or {})}
        return {**last, "error": redact.text(str(exc)), "checked_at": now,
                "as_of": last["as_of"] if last["error"] else last["checked_at"]}
    read = plan(drafts + reviewed) if chains else []
    redrafts, landed = ([c.latest.get("id") for c in read if c.action == a] for a in (REDRAFT, CLOSE))
    return {"drafts": drafts, "redrafts": redrafts, "landed": landed, "briefs": briefs, "error": None,
            "checked_at": now, "as_of": now}


def model_watched(model_cfg) -> bool:
    """A configured model this service does not start should answer at all times (a managed one need not)."""
    return model_cfg.configured and not model_cfg.lifecycle.managed


def model_health(model_cfg) -> dict:
    """Is the model answering: only a model list at {url}/models says so (as check-config reads it); something
    else answering there is `not_model`, its error the words that name the fix."""
    url = model_cfg.url.rstrip("/")
    answering, error, other = False, None, False
    try:
        r = outbound.request("GET", url + "/models", seconds=3, cap=MODEL_LIST_CAP)
    except requests.RequestException as exc:
        error = transport_words.failed_predicate(exc, seconds=3)[1]
    else:
        try:
            body = r.json()
        except ValueError:
            body = None
        if r.status_code >= 500:
            error = f"HTTP {r.status_code}"
        elif answers.is_model_list(body):
            answering = True
        else:
            other = True
            error = answers.not_a_model_server(url, r.status_code, "JSON" if body is not None
                                               else transport_words.body_kind(r))
    return {"answering": answering, "error": error, "not_model": other, "checked_at": time.time()}


MEMORY_WAITS = "the sleeps, tends and checks, and the review queue"
MODEL_WAITS = "the next sleep's drafting and each redraft"


@dataclass
class Change:
    """A flip of one thing's answering: the event to record and the log line that says it."""
    event: str
    level: int
    line: str
    fields: dict


@dataclass
class Reach:
    """Did one thing answer on its last read? `seen` says a flip once; of the first read, only a thing down."""
    what: str                   # "Memory", "The model"
    kind: str                   # "memory", "model": the events are <kind>_down and <kind>_back
    url: str
    waits: str                  # what waits on it, in words
    up: Optional[bool] = None
    since: float = 0.0          # when it last flipped (or was first read)

    def seen(self, up: bool, error: Optional[str], now: float) -> Optional[Change]:
        was = self.up
        if was is not None and up == was:
            return None
        self.up, since, self.since = up, self.since, now
        where = redact.url(self.url)
        if not up:
            why = f" ({redact.text(error)})" if error else ""
            return Change(f"{self.kind}_down", logging.WARNING,
                          f"{self.what} at {where} is not answering{why}: {self.waits} wait on it until it answers",
                          {"url": where, "error": redact.text(error) if error else None, "waiting": self.waits})
        if was is None:
            return None
        down = round(now - since)
        return Change(f"{self.kind}_back", logging.INFO,
                      f"{self.what} at {where} answers again after {down} s down: {self.waits} go on",
                      {"url": where, "down_seconds": down, "waiting": self.waits})
