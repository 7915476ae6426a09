"""The brief is the gate: the hippocampus never drafts on its own clock, so past bedtime with no brief it
counts misses, asks the main model for one, or (brief_pull) lets the small model write one."""
from __future__ import annotations

import logging
from typing import Callable, Optional

from hippocampus.cycle import claims
from hippocampus.cycle.bedtime import bedtime
from hippocampus.cycle.context import Context
from hippocampus.cycle.drafter import call_model
from hippocampus.cycle.reports import CheckReport
from hippocampus.cycle.snapshot import Snapshot, brief_created
from hippocampus.drafting import pull as pulling
from hippocampus import transport_words
from hippocampus.memory import MemoryRefused
from hippocampus.stopping import ServiceStopping
from hippocampus.words import WRITE_BRIEF, cap, hhmm, whole

log = logging.getLogger(__name__)

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
            f"one-offs to let go. {cap(WRITE_BRIEF)}.")


def request_brief(ctx: Context, force: bool = False) -> dict:
    """Ask the main model for a brief (one near-term note; an open request is nudged instead). Only asked for
    with sleep.brief_request on (the decision sees to it)."""
    req = brief_wanted(ctx)
    if req:
        req["nudges"] = (whole(req.get("nudges")) or 0) + 1         # a hand-edited count that is no number: none
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


def no_brief(ctx: Context, step, report: CheckReport) -> bool:
    """No brief: before bedtime (NOT_BEDTIME) the misses start again, past it (MISS) one more is counted and the main
    model may be asked; an ask still open is renewed either way. True: the small model may pull a brief now."""
    report.status = "waiting_for_brief" if step.misses else "not_bedtime"     # a miss counts from 1
    ctx.state.set(brief_misses=step.misses)
    try:
        if ctx.cfg.sleep.brief_request and (step.ask or brief_wanted(ctx)):
            hold_request(ctx)              # renewed at each check, so the claim outlives the wait for the brief
        if step.ask:
            request_brief(ctx)
    except claims.Taken as exc:
        report.status, report.other = "other_copy", exc.other
        return False
    return step.pull and not ctx.mechanical


def pull(ctx: Context, snap: Snapshot, report: CheckReport, take: Callable) -> tuple:
    """brief_pull: one copy at a time, the small model writes a brief from the fragments, unless one arrived since
    the tick's snapshot (another copy's pull, done). (the brief, take(its id): this copy's claim on it, taken before
    the pull's is let go; None when another copy has it), or (None, None) (the report says why)."""
    try:
        held = claims.claim(ctx, "brief_pull", "pulls a brief from the fragments")    # one pull at a time
        try:
            brief = _pull(ctx, snap, held, report)
            return brief, take(brief["id"]) if brief else None
        finally:
            held.release()
    except claims.Taken as exc:
        report.status, report.other = "other_copy", exc.other
        return None, None


def _pull(ctx: Context, snap: Snapshot, held: claims.Claim, report: CheckReport) -> Optional[dict]:
    if {b.get("id") for b in ctx.memory.open_briefs()} - {b.get("id") for b in snap.briefs}:
        log.info("a brief arrived in Memory since this check began, so no pull: the next check sleeps on it")
        return None
    shorts = ctx.memory.shorts(limit=pulling.SHOWN)
    if not shorts:
        return None
    try:
        answer = call_model(ctx, pulling.prompt(shorts), pulling.response_format(ctx.cfg.model.max_tokens))
        got, failure = pulling.read(answer.text, cut_off=answer.finish_reason == "length")
    except ServiceStopping:
        raise
    except Exception as exc:  # noqa: BLE001 - a failed pull is on the report and gives nothing
        got, failure = None, f"not written: {transport_words.in_words(exc)}"
    if failure:
        report.error = f"the small model's pulled brief was {failure}"
        log.warning("%s", report.error)
        return None
    held.check()
    res = ctx.memory.submit_brief(**got)
    return {"id": res.get("id"), "content": got.pop("summary"), "metadata": {"created_at": ctx.clock.now(), **got}}


def retire_older(ctx: Context, brief: dict, snap: Snapshot) -> None:
    """A sleep on `brief` that drafted nothing answers the open briefs written before it too (as a chain that lands
    does): each consumed, superseded by it. Which ones is recorded first, so a restart that sleeps on the brief again
    still says each, once."""
    rec = ctx.state.get("retiring_briefs") or {}
    if rec.get("brief_id") != brief["id"]:
        skip = snap.briefs_in_chains | {brief["id"]}
        rec = {"brief_id": brief["id"], "ids": written_before(snap.briefs, brief_created(brief), skip)}
        ctx.state.set(retiring_briefs=rec)
    consume_superseded(ctx, rec["ids"], brief["id"])


def written_before(open_briefs, at: Optional[float], skip: set) -> list:
    """The ids of the open briefs written before `at` (none when it is None), but those of skip."""
    if at is None:
        return []
    return [b["id"] for b in open_briefs
            if b.get("id") not in skip and (made := brief_created(b)) is not None and made < at]


def consume_superseded(ctx: Context, ids: list, used_id: str) -> None:
    """Each open brief of `ids` consumed as superseded by `used_id`, said once (a restart says none twice)."""
    for bid in ids:
        try:
            ctx.memory.consume_brief(bid, f"superseded-by-{used_id}")
        except MemoryRefused as exc:
            if exc.status != 404:
                raise
            continue                    # gone from Memory: nothing was consumed here
        ctx.emit_once("brief_consumed", "brief_id", brief_id=bid, draft_id=None, superseded_by=used_id)
