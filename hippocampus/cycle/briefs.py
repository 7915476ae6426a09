"""The brief is the gate: the check, the misses, asking for a brief, a sleep by hand.

The hippocampus never drafts on its own clock. A brief there and no chain open
means sleep now; none means wait, and past bedtime every brief_check_misses
misses it asks for one (one near-term note, and a brief_requested event each time).
"""
from __future__ import annotations

import json
import logging
import re
from typing import Optional

from hippocampus.cycle import chains as chain
from hippocampus.cycle.bedtime import BRIEF_TOPIC, REQUEST_TTL, request_text
from hippocampus.cycle.context import Context
from hippocampus.memory import MemoryError_
from hippocampus.cycle.sleep import purge, resume_submit, run_sleep
from hippocampus.stopping import ServiceStopping
from hippocampus.cycle import decide as decide_mod
from hippocampus.cycle.decide import Asked
from hippocampus.cycle.snapshot import Snapshot, read_for

log = logging.getLogger("hippocampus.gate")


def bedtime(ctx: Context) -> float:
    return decide_mod.bedtime(ctx.cfg.sleep, ctx.state, ctx.clock.now())


def brief_wanted(ctx: Context) -> Optional[dict]:
    req = ctx.state.get("brief_request")
    return req if req and req.get("answered") is None else None


def request_brief(ctx: Context, force: bool = False) -> Optional[dict]:
    """Ask the main model for a brief: one note in near-term, a brief_requested event each time.
    Called only when no usable brief is waiting (the decision, or a sleep by hand, has seen to that)."""
    if not ctx.cfg.sleep.brief_request:
        return None
    req = brief_wanted(ctx)
    if req:
        req["nudges"] = int(req.get("nudges") or 0) + 1
        ctx.state.set(brief_request=req)
        ctx.emit("brief_requested", due_at=req.get("for_sleep_due_at"), intent_id=req.get("intent_id"),
                 nudge=req["nudges"])
        return req
    now = ctx.clock.now()
    due = now if force else bedtime(ctx)
    note = ctx.memory.add_near(request_text(due, now, force), topic=BRIEF_TOPIC,
                               expires_at=max(due, now) + REQUEST_TTL)
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


def check(ctx: Context, snap: Optional[Snapshot] = None, steps: Optional[list] = None) -> dict:
    """The sleeper's steps of the tick's decision: purge what is flagged; then the gate (sleep on a brief if
    no chain is open, or count a miss and ask for one). The tick hands in its snapshot and steps; POST
    /check reads and decides its own."""
    now = ctx.clock.now()
    report: dict = {"at": now, "status": None, "brief_id": None, "misses": ctx.state.get("brief_misses") or 0,
                    "purged": 0, "error": None, "sleep": None}
    note_first_check(ctx, now)
    try:
        if snap is None:
            snap = read_for(ctx)
        if steps is None:
            steps = decide_mod.decide(snap, ctx.state, ctx.cfg.sleep, now, Asked(tend=False))
        run_steps(ctx, snap, steps, report)
        report["misses"] = ctx.state.get("brief_misses") or 0
    except ServiceStopping:
        raise                   # not a failed check: the sleep it started recorded the interruption
    except Exception as exc:  # noqa: BLE001 - a failed check is reported, never raised into the tick
        record_failed_check(ctx, report, exc)
        return report
    ctx.state.set(last_check={k: v for k, v in report.items() if k != "sleep"})
    return report


def record_failed_check(ctx: Context, report: dict, exc: Exception) -> None:
    report["status"] = "error"
    report["error"] = f"{type(exc).__name__}: {exc}"
    log.error("the check failed: %s", report["error"])
    ctx.state.set(last_check={k: v for k, v in report.items() if k != "sleep"})


def run_steps(ctx: Context, snap: Snapshot, steps: list, report: dict) -> None:
    """Execute the sleeper's steps, in the decision's order."""
    purged: list = []
    for step in steps:
        if step.kind == decide_mod.FINISH_SUBMIT:
            resume_submit(ctx, snap)
        elif step.kind == decide_mod.PURGE:
            purged, _ = purge(ctx)
            report["purged"] = len(purged)
        elif step.kind == decide_mod.WAIT_CHAIN:
            report["status"] = "chain_open"
            report["brief_id"] = (snap.brief or {}).get("id")
        elif step.kind == decide_mod.SLEEP:
            report.update(status="sleeping", brief_id=step.brief.get("id"))
            ctx.state.set(brief_misses=0)
            report["sleep"] = run_sleep(ctx, step.brief, purged=purged, snap=snap)
        elif step.kind == decide_mod.NOT_BEDTIME:
            report["status"] = "not_bedtime"
            ctx.state.set(brief_misses=0)
        elif step.kind == decide_mod.MISS:
            _miss(ctx, snap, step, report)


def _miss(ctx: Context, snap: Snapshot, step, report: dict) -> None:
    report["status"] = "waiting_for_brief"
    ctx.state.set(brief_misses=step.misses)
    if step.ask:
        request_brief(ctx)
    if step.pull:
        pulled = pull_brief(ctx)
        if pulled:
            report.update(status="sleeping_on_pulled_brief", brief_id=pulled["id"])
            ctx.state.set(brief_misses=0)
            report["sleep"] = run_sleep(ctx, pulled, pulled=True, snap=snap)


def sleep_by_hand(ctx: Context, ask_for_brief: bool = True) -> dict:
    """POST /sleep: one cycle at a time; with no brief waiting, ask for one instead of drafting blind."""
    try:
        snap = read_for(ctx)
    except MemoryError_ as exc:         # Memory down: say so, never a 500 (nothing was started)
        return {"status": "error", "draft_id": None, "operations": 0,
                "error": f"Memory did not answer, so nothing was started ({exc})",
                "message": "Memory did not answer, so nothing was started"}
    if snap.chain_open:
        waiting = next(c for c in snap.chains if c.action in (chain.REVIEW, chain.REDRAFT))
        return {"refused": True, "status": "chain_open", "draft_id": waiting.latest.get("id"), "operations": 0,
                "error": None, "message": "a chain is open (draft "
                f"{waiting.latest.get('id')} is {waiting.action.replace('_', ' ')}): one cycle at a time, so "
                "nothing was started; it sleeps again once that chain lands"}
    brief = snap.brief
    if brief is None and ask_for_brief and ctx.cfg.sleep.brief_request:
        try:
            req = request_brief(ctx, force=True)
        except MemoryError_ as exc:     # Memory down: say so, never a 500 (nothing was started)
            return {"status": "error", "draft_id": None, "operations": 0,
                    "error": f"could not ask the main model for a brief: {exc}",
                    "message": "no brief was waiting and Memory did not take the request for one; "
                               "nothing was started"}
        if req:
            return {"asked_for_brief": True, "status": "asked_for_brief", "draft_id": None, "operations": 0,
                    "error": None, "intent_id": req.get("intent_id"),
                    "message": "no brief was waiting, so the hippocampus asked the main model for one instead of "
                               "drafting blind; it sleeps at the check after the brief arrives "
                               "(or sleep with without_brief=true to draft unsteered now)"}
    return run_sleep(ctx, brief, snap=snap)


PULL_PROMPT = """You are a steering assistant for a memory consolidator. Below are short-term memory fragments.
Write a brief for tonight's sleep: what mattered, which running topics deserve long-term memory
(promote_hints: short phrases copied word for word from the fragments or their topic tags) and which
are one-offs (noise_hints). Answer with exact JSON only:
{"summary": "...", "promote_hints": ["..."], "noise_hints": ["..."], "completed_intents": []}

Fragments:
%s

JSON brief:"""


def pull_brief(ctx: Context) -> Optional[dict]:
    """brief_pull (headless installs): the small model writes a brief from the fragments."""
    if ctx.mechanical:
        return None
    from hippocampus.cycle.drafter import call_model

    shorts = ctx.memory.shorts(limit=50)
    if not shorts:
        return None
    lines = "\n".join(f"[{(s.get('metadata') or {}).get('topic') or 'untagged'}] {s.get('content', '')[:200]}"
                      for s in shorts)
    try:
        answer = call_model(ctx, PULL_PROMPT % lines)
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
    hints = {k: [str(h) for h in data.get(k) or [] if isinstance(h, (str, int))][:12]
             for k in ("promote_hints", "noise_hints")}
    res = ctx.memory.submit_brief(str(data["summary"])[:2000], hints["promote_hints"], hints["noise_hints"])
    return {"id": res.get("id"), "content": str(data["summary"]),
            "metadata": {"created_at": ctx.clock.now(), **hints}}
