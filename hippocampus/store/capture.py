"""Capture: every model call of a sleep or a redraft, kept until its draft is posted, then saved as its packet.

The hooks, one line each where the model is called: begin() when a sleep or a redraft starts, record()
after each call (its answer or its error), seal() once Memory took the draft. Calls of a run that posted
nothing are dropped by the next begin(). A mechanical sleep calls no model, so it seals nothing and
leaves no packet. Nothing here ever raises into the sleep: a packet is never worth a failed draft.
"""
from __future__ import annotations

import copy
import logging
import threading
from typing import Any, Optional

from hippocampus.store.packets import PacketStore, folder_for

log = logging.getLogger("hippocampus.replay")
VERSION = 1

_lock = threading.Lock()
_open: dict = {}            # state folder -> the calls of the run in progress there


def store_for(cfg) -> PacketStore:
    return PacketStore(folder_for(cfg))


def _key(ctx) -> str:
    return str(ctx.cfg.state_dir)


def begin(ctx) -> None:
    """A sleep or a redraft starts: what an earlier run left unposted is dropped."""
    with _lock:
        _open[_key(ctx)] = []


def record(ctx, stage: str, topic: Optional[str], prompt: str, markers, candidates: list, *,
           answer: Any = None, parsed: Any = None, error: Optional[str] = None, **more: Any) -> None:
    """One model call: what it was shown (with the markers' ids), what it answered, what was read from it."""
    try:
        call = _call(stage, topic, prompt, markers, candidates, answer, parsed, error)
        call.update(copy.deepcopy(more))
        with _lock:
            _open.setdefault(_key(ctx), []).append(call)
    except Exception:  # noqa: BLE001 - capture never fails a sleep
        log.exception("could not capture a model call for its replay packet")


def _call(stage, topic, prompt, markers, candidates, answer, parsed, error) -> dict:
    by_id = {c.get("id"): c for c in candidates or [] if isinstance(c, dict)}
    entries = []
    for m, row in markers.entries.items():
        meta = row.get("metadata") if isinstance(row.get("metadata"), dict) else {}
        entries.append({"marker": m, "id": markers.fragments.get(m), "content": row.get("content"),
                        "ts": meta.get("ts")})
    cores = []
    for m, cid in markers.cores.items():
        c = by_id.get(cid) or {}
        cores.append({"marker": m, "id": cid, "content": c.get("content"), "via": c.get("via")})
    call = {"stage": stage, "topic": topic, "prompt": prompt, "entries": entries, "candidates": cores,
            "answer": None, "finish_reason": None, "served": None, "seconds": None, "tokens": None,
            "ops": [], "dropped": [], "cut_off": False, "error": error, "failure": None, "response_format": None}
    if answer is not None:      # the schema the answer was held to, as sent (None: the plain prompt), for replays
        call.update(answer=answer.text, finish_reason=answer.finish_reason, served=answer.served,
                    seconds=round(float(answer.seconds), 3), tokens=getattr(answer, "usage", None),
                    response_format=copy.deepcopy(getattr(answer, "response_format", None)))
    if parsed is not None:
        call.update(ops=copy.deepcopy(parsed.operations), dropped=list(parsed.dropped),
                    cut_off=bool(parsed.cut_off), failure=parsed.failure)
    return call


def seal(ctx, draft_id: Optional[str], body: dict) -> None:
    """Memory took the draft: its calls become replays/<draft_id>.json."""
    with _lock:
        calls = _open.pop(_key(ctx), [])
    if not calls or not draft_id:
        return
    try:
        store_for(ctx.cfg).save(packet(ctx, draft_id, body, calls))
    except Exception:  # noqa: BLE001 - capture never fails a sleep
        log.exception("could not save the replay packet for draft %s", draft_id)


def packet(ctx, draft_id: str, body: dict, calls: list) -> dict:
    out = {"version": VERSION, "draft_id": draft_id, "created_at": ctx.clock.now(),
           "stamp": copy.deepcopy(body.get("extra") or {}), "attempt": int(body.get("attempt") or 1),
           "brief_id": body.get("brief_id_used"), "cluster_id": body.get("cluster_id") or draft_id,
           "calls": calls, "operations": copy.deepcopy(body.get("operations") or []),
           "max_tokens": ctx.cfg.model.max_tokens, "core_chars": ctx.cfg.sleep.core_chars}
    previous = body.get("previous_draft_ids") or []
    if out["attempt"] > 1 and previous:
        out["redraft_of"] = previous[-1]
    return out
