"""The status read model: built from the board alone, where each owner publishes what it shows (the actors and the
watches; the state, the cycle's holder, a sleep's progress, the tick's last snapshot, the event log's and the voice
card's: Context.wire); nothing here calls Memory, reads a file or waits on a busy actor."""
from __future__ import annotations

from hippocampus.config import redact
from hippocampus.cycle.bedtime import bedtime, is_catch_up, last_slept
from hippocampus.model import grounded, structured
from hippocampus.status.narrator import narrate
from hippocampus.status.watch import MEMORY_FIRST, MODEL_FIRST, QUEUE_FIRST, model_watched
from hippocampus.status.words import times_said

CHECKING = {"ok": None, "summary": "checking...", "lines": [], "checked_at": None}


def built_from(rt) -> tuple:
    """What build_status reads, as cheap versions, and the clock's second ("in 4 h")."""
    return rt.board.version, int(rt.ctx.clock.now())


def review(seen) -> dict:
    """The queue watch's last read of Memory, for the narrator: the pending drafts' and open briefs' ids, the
    chains waiting for a redraft and those that landed, when it was read, and (Memory down) why not and as of when."""
    seen = {**QUEUE_FIRST, **(seen or {})}
    return {**seen, "drafts": [d.get("id") for d in seen["drafts"] or [] if isinstance(d, dict)]}


def redraft_failed(history) -> dict | None:
    """The newest tend's history row if the model could not write its redraft: a tick that only defers the chain
    since then rewrites last_tend, not the history, so this still says why the chain waits."""
    tends = [r for r in history or [] if isinstance(r, dict) and r.get("kind") == "tend"]
    said = tends[-1].get("model_failures") if tends else None
    return tends[-1] if isinstance(said, list) and said and isinstance(said[0], dict) else None


def sleep_settings(sleep) -> dict:
    """The sleep settings the words depend on."""
    return {"mode": sleep.mode, "interval_seconds": sleep.interval_seconds, "sleep_at": sleep.at or None,
            "tend_interval_seconds": sleep.tend_interval_seconds, "tend_cycle": sleep.tend_cycle,
            "tick_seconds": sleep.heartbeat(),
            "brief_pull_after": sleep.brief_check_misses if sleep.brief_pull else None}


def build_status(rt) -> dict:
    """The read model: the board; no Memory call."""
    cfg, ctx = rt.cfg, rt.ctx
    now = ctx.clock.now()
    board = rt.board.all()
    st = board.get("state") or {}
    req = st.get("brief_request") or {}
    wanted = bool(req) and req.get("answered") is None
    learned = board.get("model_learned") or {}
    s = {
        "service": "seren-hippocampus",
        **sleep_settings(cfg.sleep),
        "model_configured": cfg.model.configured,
        "model_lifecycle": board.get("lifecycle"),
        "next_tick_at": (board.get("scheduler") or {}).get("next_tick_at"),
        "ticking": (board.get("ticks") or {}).get("ticking", False),
        "bedtime_at": bedtime(cfg.sleep, st, now),
        "brief_misses": st.get("brief_misses", 0),
        "last_check": st.get("last_check"),
        "catch_up_next": is_catch_up(cfg.sleep, last_slept(st, now), now),
        "brief_wanted": wanted,
        "brief_requested_at": req.get("asked_at") if wanted else None,
        "webhook": bool(cfg.notify.webhook_url),
        "ripple": board.get("ripple"),
        "wakeup": {**(board.get("wakeup") or CHECKING), "last": (board.get("ripple") or {}).get("last") or {}},
        "last_sleep": st.get("last_sleep"),
        "last_tend": st.get("last_tend"),
        "redrafts_waiting_since": st.get("redrafts_waiting_since"),
        "redraft_failed": redraft_failed(st.get("history")),
        "gave_up": st.get("gave_up"),       # a chain closed because its redraft could not be written (tend.GAVE_UP)
        "review": review(board.get("queue")),
        "busy": board.get("cycle"),
        "chain": board.get("snapshot"),
        "ticks": (board.get("ticks") or {}).get("ticks", 0),
        "progress": board.get("progress") or {},
        "actors": board.get("actors") or {},
        "memory": {**(board.get("memory_health") or MEMORY_FIRST), "url": redact.url(ctx.memory.url)},
        "model_url": redact.url(cfg.model.url) or None,
        "model_health": (board.get("model_health") or MODEL_FIRST) if model_watched(cfg.model) else None,
        "model_fit": board.get("model_fit") if cfg.model.configured else None,
        "model_structured": (structured.view(cfg.model.structured, learned.get("refused"))
                             if cfg.model.configured else None),
        "model_write": (grounded.view(cfg.model.write, learned.get("chosen"), st.get("history") or [],
                                      grounded.model_key(cfg.model.name, redact.url(cfg.model.url)))
                        if cfg.model.configured else None),
        "state_error": st.get("write_error"),
        "events_error": board.get("events"),
        "scrub_error": board.get("scrub"),
        "voice": {"enabled": True, **board["voice"]} if "voice" in board else {"enabled": False},
    }
    s = redact.deep(s)       # every URL in it (the ripple's, an error's) without its user:password@ or ?key=
    with times_said() as times:
        s["say"] = narrate(s, now)
    s["say"]["times"] = times            # each "HH:MM" in the words, as the epoch the viewer shows locally
    s["explain"] = s["say"]["headline"]
    return s
