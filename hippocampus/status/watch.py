"""Is Memory answering, is the model answering, what waits for review: plain reads, run on the watch
actors' beat (actors/watch.py) and published to the board, so no request waits on any of them."""
from __future__ import annotations

import time

import requests

from hippocampus.config import redact
from hippocampus.memory import MemoryError_, NotSerenMemory

MEMORY_FIRST = {"reachable": None, "error": None, "checked_at": 0.0}
MODEL_FIRST = {"answering": None, "error": None, "checked_at": 0.0}


def memory_health(memory) -> dict:
    """Does Memory answer (its error without user:password@ or ?key=)?"""
    try:
        memory.health()
        reachable, error, other = True, None, False
    except MemoryError_ as exc:
        reachable, error, other = False, redact.text(str(exc)), isinstance(exc, NotSerenMemory)
    return {"reachable": reachable, "error": error, "not_memory": other, "checked_at": time.time()}


def pending_drafts(memory, limit: int = 50) -> dict:
    """What waits for review (the queue), or why it could not be read."""
    try:
        drafts, error = memory.drafts("pending", limit=limit), None
    except MemoryError_ as exc:
        drafts, error = [], redact.text(str(exc))
    return {"drafts": drafts, "error": error, "checked_at": time.time()}


def model_watched(model_cfg) -> bool:
    """A configured model this service does not start itself should answer at all times: is it?
    (A managed one is down between sleeps by design, so it is not watched.)"""
    return model_cfg.configured and not model_cfg.lifecycle.managed


def model_health(model_cfg) -> dict:
    try:
        r = requests.get(model_cfg.url.rstrip("/") + "/models", timeout=3)
        answering, error = r.status_code < 500, None if r.status_code < 500 else f"HTTP {r.status_code}"
    except requests.RequestException as exc:
        answering, error = False, type(exc).__name__
    return {"answering": answering, "error": error, "checked_at": time.time()}
