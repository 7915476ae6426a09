"""The replay packets' recorder: every model call of a sleep or a redraft, kept until its draft is posted, then
saved as its packet (packets.py); the calls are kept on the context (ctx.capture), never in a module. Nothing
here raises into the sleep: a packet is never worth a failed draft.
"""
from __future__ import annotations

import copy
import logging
from typing import Any, Optional

from hippocampus.store.packets import FOLDER, PacketStore

log = logging.getLogger(__name__)

VERSION = 1


def store_for(cfg) -> PacketStore:
    return PacketStore(cfg.state_dir / FOLDER)


def begin(ctx) -> None:
    """A sleep or a redraft starts: what an earlier run left unposted is dropped."""
    ctx.capture = []


def record(ctx, stage: str, topic: Optional[str], prompt: str, markers, candidates: list, *,
           answer: Any = None, parsed: Any = None, error: Optional[str] = None, **more: Any) -> None:
    """One model call: what it was shown (with the markers' ids), what it answered, what was read from it."""
    try:
        call = _call(stage, topic, prompt, markers, candidates, answer, parsed, error)
        call.update(copy.deepcopy(more))
        ctx.capture.append(call)        # one run at a time (the cycle lock); an append is atomic
    except Exception:  # noqa: BLE001 - capture never fails a sleep
        log.exception("could not capture a model call for its replay packet")


def _call(stage, topic, prompt, markers, candidates, answer, parsed, error) -> dict:
    by_id = {c.get("id"): c for c in candidates or [] if isinstance(c, dict)}
    entries = [{"marker": m, "id": markers.fragments.get(m), "content": row.get("content"),
                "ts": row["metadata"].get("ts") if isinstance(row.get("metadata"), dict) else None}
               for m, row in markers.entries.items()]
    cores = [{"marker": m, "id": cid, "content": (by_id.get(cid) or {}).get("content"),
              "via": (by_id.get(cid) or {}).get("via")} for m, cid in markers.cores.items()]
    call = {"stage": stage, "topic": topic, "prompt": prompt, "entries": entries, "candidates": cores,
            "answer": None, "finish_reason": None, "served": None, "seconds": None, "tokens": None,
            "ops": [], "dropped": [], "cut_off": False, "error": error, "failure": None, "response_format": None}
    if answer is not None:
        call.update(answer=answer.text, finish_reason=answer.finish_reason, served=answer.served,
                    seconds=round(float(answer.seconds), 3), tokens=getattr(answer, "usage", None),
                    response_format=copy.deepcopy(getattr(answer, "response_format", None)))
    if parsed is not None:
        call.update(ops=copy.deepcopy(parsed.operations), dropped=list(parsed.dropped),
                    cut_off=bool(parsed.cut_off), failure=parsed.failure)
    return call


def seal(ctx, draft_id: Optional[str], body: dict) -> None:
    """Memory took the draft: its calls become replays/<draft_id>.json."""
    calls, ctx.capture = ctx.capture, []
    if not calls or not draft_id:
        return
    try:
        packet = {"version": VERSION, "draft_id": draft_id, "created_at": ctx.clock.now(),
                  "stamp": copy.deepcopy(body.get("extra") or {}), "attempt": int(body.get("attempt") or 1),
                  "brief_id": body.get("brief_id_used"), "cluster_id": body.get("cluster_id") or draft_id,
                  "calls": calls, "operations": copy.deepcopy(body.get("operations") or []),
                  "max_tokens": ctx.cfg.model.max_tokens, "core_chars": ctx.cfg.sleep.core_chars}
        previous = body.get("previous_draft_ids") or []
        if packet["attempt"] > 1 and previous:
            packet["redraft_of"] = previous[-1]
        store_for(ctx.cfg).save(packet)
    except Exception:  # noqa: BLE001 - capture never fails a sleep
        log.exception("could not save the replay packet for draft %s", draft_id)
