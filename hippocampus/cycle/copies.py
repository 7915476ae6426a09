"""Is this copy alone on its Memory? Claims, the "slept" note and the drafted-by look-up cost Memory requests and
near-term writes (each one embedded), so a copy that has seen no other pays none of them.

A copy announces itself once per start with one near-term "copy" note (renewed when half its week is gone), posted
before it reads the near-term notes, so of two copies starting together the later reader sees the earlier. Another
copy is seen in any live, well-formed note of another copy (its announcement, a claim, a "slept" note) or in a live
draft stamped by it; until the near-term notes are first read this copy counts as not alone (the old, safe way).
A forged note can only make a copy think it is not alone, which costs requests, never safety. While someone looks
(a viewer, a /status client), the queue watch reads the near-term notes on its beat too (read_slept), so two copies
name one bedtime within a beat: a read, no write.
"""
from __future__ import annotations

import logging
import socket
from typing import Optional

from hippocampus.cycle import claims, notes as note_rules
from hippocampus.cycle.bedtime import bedtime, memory_slept, own_slept
from hippocampus.memory import MemoryError_

log = logging.getLogger(__name__)

COPY_TOPIC = "hippocampus, copy"
ANNOUNCE_SECONDS = 7 * 86400.0      # a copy that stopped for good stops costing the others after this


def _mine(ctx, notes: list) -> Optional[dict]:
    me, now = claims.me(ctx), ctx.clock.now()
    for n in notes:
        meta = n.get("metadata") or {}
        if (meta.get("topic") == COPY_TOPIC and meta.get("copy") == me["copy"] and meta.get("pid") == me["pid"]
                and (note_rules.sane_time(meta.get("until")) or 0) - now > ANNOUNCE_SECONDS / 2):
            return n
    return None


def announce(ctx, notes: Optional[list] = None) -> None:
    """Post this copy's "copy" note unless a fresh one of this process is there (gone, or past half its week: posted
    again); older ones of this copy go. Memory's watch does it at start, a tick if that could not, and a tick that
    read the notes renews it: one at a time."""
    with ctx.announcing:
        if not ctx.copies_announced or notes is not None:
            _announce(ctx, notes)


def _announce(ctx, notes: Optional[list]) -> None:
    try:
        notes = ctx.memory.list_near() if notes is None else notes
        if _mine(ctx, notes) is not None:
            ctx.copies_announced = True
            return
        me, until = claims.me(ctx), ctx.clock.now() + ANNOUNCE_SECONDS
        ctx.memory.add_near(f"seren-hippocampus (pid {me['pid']} on {me['host']}) runs on this Memory; nothing to "
                            "do about it", topic=COPY_TOPIC, expires_at=until, trigger_type="event",
                            trigger_value="seren-hippocampus copy", extra={**me, "until": until})
        ctx.copies_announced = True
        for n in notes:
            meta = n.get("metadata") or {}
            if meta.get("topic") == COPY_TOPIC and meta.get("copy") == me["copy"]:
                ctx.memory.delete_near(n["id"])
    except MemoryError_ as exc:
        log.warning("could not tell other copies on this Memory that this one runs (tried again at the next "
                    "sleep or chain step): %s", exc)


def _read_copy(note: dict, now: float) -> tuple:
    """(the "copy" note as {copy, pid, host, until}, why not) for a "copy" note; (None, None) for another note."""
    meta = note.get("metadata") if isinstance(note, dict) else None
    if not isinstance(meta, dict) or meta.get("topic") != COPY_TOPIC:
        return None, None
    if why := note_rules.stamp_problem(meta):
        return None, why
    created, until = note_rules.sane_time(meta.get("created_at")), note_rules.sane_time(meta.get("until"))
    if created is None or created > now + note_rules.CLOCK_SKEW_SECONDS:
        return None, f"its created_at {meta.get('created_at')!r} is not a time before now"
    if until is None or until > created + ANNOUNCE_SECONDS + note_rules.CLOCK_SKEW_SECONDS:
        return None, f"its until {meta.get('until')!r} is not a time within a week of the note"
    return {"copy": meta["copy"], "pid": meta["pid"], "host": meta["host"], "until": until}, None


def _other_note(ctx, note: dict, mine: str, now: float) -> bool:
    """Whether the note shows another live copy; a note that looks like a copy's but is not one is named in the
    log once (claims.malformed) and shows nothing."""
    meta = note.get("metadata") if isinstance(note, dict) else None
    if not isinstance(meta, dict):
        return False
    if "claim" in meta:
        found, why = note_rules.read_claim(note, meta.get("claim"), now, mine)
    elif meta.get("topic") == note_rules.SLEPT_TOPIC:
        at, why = note_rules.read_slept(note, now)
        found = None if at is None else {"copy": meta.get("copy"), "until": float("inf"), "host": "", "pid": 0}
    else:
        found, why = _read_copy(note, now)
    if why:
        claims.malformed(ctx, note, why)
    if found is None or found.get("copy") == mine:
        return False
    return not found["host"] or note_rules.stale(found, now, socket.gethostname(), claims.alive) is None


def _other_draft(draft: dict, me: dict) -> bool:
    extra = draft.get("extra") or {}
    return bool(extra.get("copy_folder")) and (extra.get("copy_host"), extra.get("copy_folder")) != (me["host"],
                                                                                                    me["folder"])


def seen(ctx, near: Optional[list], drafts) -> None:
    """Update what this copy knows: from the near-term notes (when read this tick) and the live drafts."""
    me = claims.me(ctx)
    if any(_other_draft(d, me) for d in drafts):
        ctx.copies_alone = False
        return
    if near is not None:
        now, was = ctx.clock.now(), ctx.copies_alone
        ctx.copies_alone = not any(_other_note(ctx, n, me["copy"], now) for n in near)
        slept = own_slept(ctx.state)
        if was and not ctx.copies_alone and slept:     # the "slept" note a copy alone never wrote, for the newcomer
            claims.post_slept(ctx, slept, bedtime(ctx.cfg.sleep, ctx.state, now))


def read_slept(ctx, drafts: list) -> None:
    """While someone looks (the queue watch's beat, and after each cycle): the near-term notes, read, so that
    another copy's newer sleep (its "slept" note) moves the bedtime shown here to the one that copy names, and a
    copy that slept alone tells a newcomer its last sleep (seen(): the note it never wrote). A read, never a
    write, unless a newcomer is there. drafts: the pending drafts the queue watch just read."""
    try:
        near = ctx.memory.list_near()
        seen(ctx, near, drafts)
    except MemoryError_:
        return                      # the queue's own read says Memory is down
    if not claims.alone(ctx):
        heard_slept(ctx, near)


def heard_slept(ctx, near: list) -> None:
    """Another copy's newer sleep, from the well-formed "slept" notes among `near`, kept in the state (memory_slept_at)
    for bedtime."""
    slept = claims.slept_at(ctx, near)
    if slept is not None and slept > (memory_slept(ctx.state, ctx.clock.now()) or 0):
        ctx.state.set(memory_slept_at=slept)
