"""The brief is the gate: the hippocampus never drafts on its own clock, so past bedtime with no brief it
counts misses, asks the main model for one, or (brief_pull) lets the small model write one."""
from __future__ import annotations

import json
import logging
import re
from typing import Optional

from hippocampus.cycle import claims
from hippocampus.cycle.bedtime import bedtime
from hippocampus.cycle.context import Context
from hippocampus.cycle.drafter import call_model
from hippocampus.cycle.reports import CheckReport
from hippocampus.cycle.sleep import run_sleep
from hippocampus.cycle.snapshot import Snapshot
from hippocampus.drafting.schema import brief_format
from hippocampus.stopping import ServiceStopping
from hippocampus.words import hhmm

log = logging.getLogger("hippocampus.briefs")

BRIEF_TOPIC = "hippocampus, brief"
REQUEST_TTL = 6 * 3600
ASKS = "asks the main model for a brief"


def hold_request(ctx: Context) -> None:
    """Take or renew this copy's claim to ask the main model for a brief (claims.Taken: another copy asks)."""
    claims.claim(ctx, claims.BRIEF_REQUEST, ASKS).check()


def brief_wanted(ctx: Context) -> Optional[dict]:
    req = ctx.state.get("brief_request")
    return req if req and req.get("answered") is None else None


def request_text(due_at: float, now: float, forced: bool) -> str:
    if forced:
        head = ("A sleep was started by hand. The hippocampus wants a brief before it drafts, "
                "and will sleep at its next check after the brief arrives.")
    elif due_at > now:
        head = f"The hippocampus wants a brief before it sleeps at {hhmm(due_at)}."
    else:
        head = "The hippocampus wants a brief before it sleeps, soon: bedtime has passed."
    return (head + " A brief says what mattered since the last sleep; promote_hints name running bits and "
            "real lessons worth keeping (short phrases copied from the memories), noise_hints name "
            "one-offs to let go. Write it with submit_brief on Memory, then nudge the hippocampus.")


def request_brief(ctx: Context, force: bool = False) -> dict:
    """Ask the main model for a brief (one near-term note; an open request is nudged instead). Only asked for
    with sleep.brief_request on (the decision sees to it)."""
    req = brief_wanted(ctx)
    if req:
        req["nudges"] = int(req.get("nudges") or 0) + 1
        ctx.state.set(brief_request=req)
        ctx.emit("brief_requested", due_at=req.get("for_sleep_due_at"), intent_id=req.get("intent_id"),
                 nudge=req["nudges"])
        return req
    now = ctx.clock.now()
    due = now if force else bedtime(ctx.cfg.sleep, ctx.state, now)
    until = max(due, now) + REQUEST_TTL
    note_id, fields = claims.riding(ctx, claims.BRIEF_REQUEST, ASKS, until)
    note = ctx.memory.add_near(request_text(due, now, force), topic=BRIEF_TOPIC, expires_at=until,
                               note_id=note_id, extra=fields)
    req = {"asked_at": now, "for_sleep_due_at": due, "intent_id": note.get("id"), "answered": None,
           "nudges": 0, "forced": force}
    ctx.state.set(brief_request=req)
    ctx.emit("brief_requested", due_at=due, intent_id=req["intent_id"])
    log.info("asked the main model for a brief (note %s)", req["intent_id"])
    return req


def note_first_check(ctx: Context, now: float) -> None:
    """A store that never slept is due from its first check: misses count on from here."""
    if not ctx.state.get("last_sleep_ok_at") and not ctx.state.get("first_check_at"):
        ctx.state.set(first_check_at=now)


def miss(ctx: Context, snap: Snapshot, step, report: CheckReport) -> None:
    """Past bedtime with no brief: count the miss, ask for one, or pull one and sleep on it."""
    report.status = "waiting_for_brief"
    ctx.state.set(brief_misses=step.misses)
    try:
        if ctx.cfg.sleep.brief_request and (step.ask or brief_wanted(ctx)):
            hold_request(ctx)              # renewed each miss while this copy's ask is open
        if step.ask:
            request_brief(ctx)
        if not step.pull or ctx.mechanical:
            return
        held = claims.claim(ctx, "brief_pull", "pulls a brief from the fragments")   # one pull at a time
        try:
            pulled = pull_brief(ctx, snap, held)
            mine = pulled and claims.claim(ctx, f"brief:{pulled['id']}", f"sleeps on brief {pulled['id']}")
        finally:
            held.release()
    except claims.Taken as exc:
        report.status, report.other = "other_copy", exc.other
        return
    if pulled:
        report.status, report.brief_id = "sleeping_on_pulled_brief", pulled["id"]
        ctx.state.set(brief_misses=0)
        try:
            report.sleep = run_sleep(ctx, pulled, snap, pulled=True, claim=mine)
        finally:
            mine.release()


PULL_PROMPT = """You are a steering assistant for a memory consolidator. Below are short-term memory fragments.
Write a brief for tonight's sleep: what mattered, which running topics deserve long-term memory
(promote_hints: short phrases copied word for word from the fragments or their topic tags) and which
are one-offs (noise_hints). Answer with exact JSON only:
{"summary": "...", "promote_hints": ["..."], "noise_hints": ["..."], "completed_intents": []}

Fragments:
%s

JSON brief:"""


def pull_brief(ctx: Context, snap: Snapshot, held: claims.Claim) -> Optional[dict]:
    """brief_pull (headless installs): the small model writes a brief from the fragments, unless one arrived
    since the tick's snapshot (another copy's pull, done)."""
    if {b.get("id") for b in ctx.memory.open_briefs()} - {b.get("id") for b in snap.briefs}:
        log.info("a brief arrived in Memory since this check began, so no pull: the next check sleeps on it")
        return None
    shorts = ctx.memory.shorts(limit=50)
    if not shorts:
        return None
    lines = "\n".join(f"[{(s.get('metadata') or {}).get('topic') or 'untagged'}] {s.get('content', '')[:200]}"
                      for s in shorts)
    try:
        answer = call_model(ctx, PULL_PROMPT % lines, brief_format(ctx.cfg.model.max_tokens))
        m = re.search(r"\{.*\}", answer.text, re.S)
        data = json.loads(m.group(0)) if m else None
    except ServiceStopping:
        raise
    except Exception as exc:  # noqa: BLE001 - a failed pull is logged and gives nothing
        log.warning("the small model could not pull a brief: %s", exc)
        return None
    if not isinstance(data, dict) or not str(data.get("summary") or "").strip():
        log.warning("the small model's pulled brief was not the JSON asked for")
        return None
    held.check()
    hints = {k: [str(h) for h in data.get(k) or [] if isinstance(h, (str, int))][:12]
             for k in ("promote_hints", "noise_hints")}
    res = ctx.memory.submit_brief(str(data["summary"])[:2000], hints["promote_hints"], hints["noise_hints"])
    return {"id": res.get("id"), "content": str(data["summary"]),
            "metadata": {"created_at": ctx.clock.now(), **hints}}
