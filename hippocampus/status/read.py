"""The status read model: built from the board (where the watches publish), the durable state and the tick's
last snapshot; nothing here calls Memory or waits on a busy actor."""
from __future__ import annotations

from hippocampus.config import redact
from hippocampus.cycle.bedtime import bedtime, is_catch_up, last_slept
from hippocampus.model import grounded, size, structured
from hippocampus.status.narrator import narrate
from hippocampus.status.watch import MEMORY_FIRST, MODEL_FIRST, QUEUE_FIRST, model_watched
from hippocampus.status.words import times_said

CHECKING = {"ok": None, "summary": "checking...", "lines": [], "checked_at": None}


def built_from(rt) -> tuple:
    """What build_status reads, as cheap versions and references, and the clock's second ("in 4 h")."""
    ctx = rt.ctx
    return (rt.board.version, ctx.state.version, ctx.state.write_error, ctx.cycle.holder(), ctx.last_snapshot,
            tuple(ctx.progress.items()), ctx.events.write_error,
            ctx.voice.version() if ctx.voice is not None else None, int(ctx.clock.now()),
            structured.refused(rt.cfg.model.url), size.chosen(rt.cfg.model.url) is not None)


def review(seen) -> dict:
    """The queue watch's last read of Memory, for the narrator: the pending drafts' and open briefs' ids, when
    it was read, and (Memory down) why not and as of when."""
    seen = seen or QUEUE_FIRST
    return {"drafts": [d.get("id") for d in seen.get("drafts") or [] if isinstance(d, dict)],
            "briefs": seen.get("briefs"), "checked_at": seen.get("checked_at"), "as_of": seen.get("as_of"),
            "error": seen.get("error")}


def build_status(rt) -> dict:
    """The read model: the board, the durable state and the last snapshot; no Memory call."""
    cfg, ctx = rt.cfg, rt.ctx
    st = ctx.state.pick("brief_request", "last_check", "last_sleep_ok_at", "first_check_at", "memory_slept_at",
                        "brief_misses", "last_sleep", "last_tend", "redrafts_waiting_since")
    now = ctx.clock.now()
    board = rt.board.all()
    sched = board.get("scheduler") or {}
    req = st.get("brief_request") or {}
    wanted = bool(req) and req.get("answered") is None
    last_check = st.get("last_check")
    s = {
        "service": "seren-hippocampus",
        "mode": cfg.sleep.mode,
        "interval_seconds": cfg.sleep.interval_seconds,
        "sleep_at": cfg.sleep.at or None,
        "tend_interval_seconds": cfg.sleep.tend_interval_seconds,
        "tend_cycle": cfg.sleep.tend_cycle,
        "tick_seconds": cfg.sleep.heartbeat(),
        "model_configured": cfg.model.configured,
        "model_lifecycle": board.get("lifecycle"),
        "next_tick_at": sched.get("next_tick_at"),
        "ticking": sched.get("ticking", False),
        "bedtime_at": bedtime(cfg.sleep, st, now),
        "brief_misses": st.get("brief_misses", 0),
        "last_check": last_check,
        "catch_up_next": is_catch_up(cfg.sleep, last_slept(st, now), now),
        "brief_wanted": wanted,
        "brief_requested_at": req.get("asked_at") if wanted else None,
        "webhook": bool(cfg.notify.webhook_url),
        "ripple": board.get("ripple"),
        "wakeup": {**(board.get("wakeup") or CHECKING), "last": (board.get("ripple") or {}).get("last") or {}},
        "last_sleep": st.get("last_sleep"),
        "last_tend": st.get("last_tend"),
        "redrafts_waiting_since": st.get("redrafts_waiting_since"),
        "review": review(board.get("queue")),
        "busy": ctx.cycle.describe(),
        "chain": None if ctx.last_snapshot is None else ctx.last_snapshot.summary(),
        "ticks": sched.get("ticks", 0),
        "progress": dict(ctx.progress),
        "actors": board.get("actors") or {},
        "memory": {**(board.get("memory_health") or MEMORY_FIRST), "url": redact.url(ctx.memory.url)},
        "model_url": redact.url(cfg.model.url) or None,
        "model_health": (board.get("model_health") or MODEL_FIRST) if model_watched(cfg.model) else None,
        "model_fit": board.get("model_fit") if cfg.model.configured else None,
        "model_structured": structured.view(cfg.model.structured, cfg.model.url) if cfg.model.configured else None,
        "model_write": (grounded.view(cfg.model.write, cfg.model.url, ctx.state.pick("history")["history"] or [],
                                      grounded.model_key(cfg.model.name, redact.url(cfg.model.url)))
                        if cfg.model.configured else None),
        "state_error": ctx.state.write_error,
        "events_error": ctx.events.write_error,
        "voice": ({"enabled": True, "version": ctx.voice.version()} if ctx.voice is not None
                  else {"enabled": False}),
    }
    s = redact.deep(s)       # every URL in it (the ripple's, an error's) without its user:password@ or ?key=
    with times_said() as times:
        s["say"] = narrate(s, now)
    s["say"]["times"] = times            # each "HH:MM" in the words, as the epoch the viewer shows locally
    s["explain"] = s["say"]["headline"]
    return s
