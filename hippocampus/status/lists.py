"""The words of the lists beside the status: the review queue (GET /queue), the quality report
(GET /quality) and the events (GET /events and MCP recent_events). Pure: each answer in, its `say` out,
so the viewer lays them out and words none of them.
"""
from __future__ import annotations

from typing import Optional

from hippocampus.status.words import hhmm, n, short, span


def _age(seconds: float) -> str:
    return "under a minute" if seconds < 60 else span(seconds)


# ---------------------------------------------------------------- the queue
def draft_line(d: dict) -> str:
    ops, pending = d.get("operations") or 0, d.get("pending")
    some = f" ({pending} pending)" if pending is not None and pending != ops else ""
    return " · ".join([n(ops, "operation") + some,
                       f"attempt {d.get('attempt') or 1}" + (" (last)" if d.get("terminal") else ""),
                       "waiting " + _age(d.get("age_seconds") or 0)])


def queue(drafts: list, now: float, error: Optional[str] = None) -> dict:
    """The /queue answer: each draft waiting for review, its line, and the note over them."""
    if error:
        # the headline names Memory and why it does not answer: the note says what that means here, once
        return {"count": 0, "drafts": [], "error": error,
                "say": {"level": "bad", "note": "Memory is not answering, so what waits for review cannot be "
                                                "read until it does."}}
    out = []
    for d in drafts:
        ops = d.get("operations") or []
        row = {"id": d.get("id"), "summary": d.get("summary"), "attempt": d.get("attempt"),
               "terminal": d.get("terminal"), "created_at": d.get("created_at"),
               "age_seconds": max(0.0, now - float(d.get("created_at") or now)), "operations": len(ops),
               "pending": sum(1 for o in ops if o.get("status", "pending") == "pending"),
               "kinds": sorted({o.get("kind") for o in ops})}
        out.append({**row, "say": draft_line(row)})
    waiting = sum(d["pending"] for d in out)
    note = f"{n(out, 'draft')}, {n(waiting, 'operation')} waiting for a decision." if out \
        else "Nothing waits for review."
    return {"count": len(out), "drafts": out, "say": {"level": "ok", "note": note}}


# ---------------------------------------------------------------- the quality report
def _pct(rate: Optional[float]) -> str:
    return "n/a" if rate is None else f"{round(rate * 100)}%"


def group_say(g: dict) -> dict:
    counts = [f"{n(g.get('proposed') or 0, 'operation')} proposed", f"{g.get('approved_first')} approved first time",
              f"{g.get('approved_after_redraft')} after a redraft", f"{g.get('approved_edited')} with edits",
              f"{g.get('denied_to_end')} denied to the end"] + ([f"{g['waiting']} waiting"] if g.get("waiting") else [])
    calls = g.get("calls") or 0
    rates = [f"cut off {_pct(g.get('cut_off_rate'))} of {n(calls, 'model call')}" if calls and
             g.get("cut_off_rate") is not None else "no model calls on record"]
    if g.get("invented_rate") is not None:
        rates.append(f"invented numbers in {_pct(g.get('invented_rate'))}")
    words = ", ".join(f"{w} ({c})" for w, c in g.get("critique_words") or [])
    return {"badge": f"voice card v{g['voice']}" if g.get("voice") else "no voice card",
            "counts": " · ".join(counts), "rates": " · ".join(rates) + (f" · critiques: {words}" if words else "")}


def quality_note(rep: dict) -> dict:
    err = rep.get("error")
    if not rep.get("ready"):
        note = "Memory's drafts could not be read, so there is no report yet." if err \
            else "Reading the reviews in Memory…"
    elif not rep.get("groups"):
        note = "No drafts on record yet."
    else:
        note = (f"{n(rep.get('drafts') or 0, 'draft')} on record; each operation counts under the model and card "
                "of the draft that first proposed it." + (" (not refreshed: Memory did not answer)" if err else ""))
    return {"level": "bad" if err else "ok", "note": note}


def quality(rep: dict) -> dict:
    """The /quality answer: the report, each group's words and the note over them."""
    return {**rep, "groups": [{**g, "say": group_say(g)} for g in rep.get("groups") or []],
            "say": quality_note(rep)}


# ---------------------------------------------------------------- the events
# what an event's `count` counts, by its type (a nudge burst is one event whose count grows)
COUNTED = {"nudged": ("nudge", "nudges in a row"), "purged": ("flagged memory purged", "flagged memories purged"),
           "restored": ("memory restored", "memories restored")}


def _count(e: dict) -> str:
    one, many = COUNTED.get(e.get("type"), ("time", "times"))
    return n(int(e.get("count") or 0), one, many)


def _facts(e: dict) -> list:
    """The event's own facts, each a few words, in a fixed order."""
    has = {k: e.get(k) is not None for k in ("operations", "count", "attempt", "landed", "restarts")}
    bits = [(e.get("actor"), f"actor {e.get('actor')}"), (e.get("draft_id"), f"draft {short(e.get('draft_id'))}"),
            (has["operations"], n(e.get("operations") or 0, "operation")), (has["count"], _count(e)),
            (has["attempt"], f"attempt {e.get('attempt')}"), (has["landed"], f"{e.get('landed')} landed"),
            (e.get("denied"), f"{e.get('denied')} denied"), (has["restarts"], n(e.get("restarts") or 0, "restart")),
            (e.get("by"), f"by {e.get('by')}"), (e.get("quiet"), "quiet"), (e.get("catch_up"), "catch-up"),
            (e.get("topic"), f"topic {e.get('topic')}"), (e.get("how"), str(e.get("how"))),
            (e.get("due_at"), f"for the sleep due at {hhmm(e.get('due_at'))}"),
            (isinstance(e.get("nudge"), int) and e.get("nudge"), f"asked again ({n(e.get('nudge'), 'reminder')} so far)"),
            (e.get("woke") is not None and e.get("type") == "nudged",
             "a turn started at once" if e.get("woke") else "a turn was already under way")]
    return [words for on, words in bits if on]


def outcome(kind: str, o: Optional[dict]) -> str:
    """What the webhook or the ripple did with an event."""
    if not o:
        return ""
    if kind == "webhook":
        return "webhook sent" if o.get("delivered") else "webhook not sent" + (f" ({o['error']})" if o.get("error")
                                                                             else "")
    if o.get("skipped"):
        return "ripple kept: the last one still runs"
    if o.get("refused"):
        return f"ripple refused ({o.get('error') or ''})"
    return ("ripple fired" + (" on retry" if o.get("retried") else "")) if o.get("ok") \
        else f"ripple failed ({o.get('error') or ''})"


def event_say(e: dict) -> dict:
    """{"facts": "actor sleeper · draft 3f2a… · ...", "outcome": "webhook sent · ripple fired"}."""
    outs = [w for w in (outcome("webhook", e.get("delivery")), outcome("ripple", e.get("ripple"))) if w]
    return {"facts": " · ".join(_facts(e)), "outcome": " · ".join(outs)}


def events_note(webhook: bool) -> dict:
    """The note over the events (each event's own words are event_say's, added by the facade)."""
    return {"note": "A webhook is set; each event says whether it was sent." if webhook else ""}
