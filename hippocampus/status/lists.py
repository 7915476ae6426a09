"""The words of the lists beside the status (the review queue, the quality report, the events) and of one
sleep, tend or check report (the viewer's result line, MCP's message, a history row), so that the viewer lays
them out and words none of them."""
from __future__ import annotations

import re
from typing import Optional

from hippocampus.drafting import guard
from hippocampus.status.words import ACTOR_WORDS, cap, hhmm, n, span, times_said
from hippocampus.words import ASKED_FOR_BRIEF, another_copy, pct

# an operation's kind, as a person says it (one, many)
KINDS = {"new_core": ("new memory", "new memories"), "attach": ("addition to a memory", "additions to memories"),
         "supersede": ("replacement of a memory", "replacements of memories"),
         "verbatim": ("memory kept word for word", "memories kept word for word")}
_COUNTED_KIND = re.compile(r"\b(\d+) (new_core|attach|supersede|verbatim)\b")
_REDRAFT = re.compile(r"^redraft of [0-9a-f-]{8,}(?: \(attempt (\d+)\))?", re.I)
_HEX_ID = re.compile(r"\b[0-9a-f]{32}\b|\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.I)


def kind_words(kind: str, count: int = 1) -> str:
    one, many = KINDS.get(kind, (str(kind).replace("_", " "),) * 2)
    return one if count == 1 else many


def summary_words(summary: Optional[str]) -> str:
    """A draft's summary as this service writes it ("2 new_core across cycling, commute", "redraft of <id>
    (attempt 2)"), in a person's words; ids left for the details view."""
    text = str(summary or "").strip()
    if not text:
        return "(no summary)"
    text = _REDRAFT.sub(lambda m: "a redraft of a denied draft" + (f" (attempt {m.group(1)})" if m.group(1)
                                                                     else ""), text)
    text = _COUNTED_KIND.sub(lambda m: f"{m.group(1)} {kind_words(m.group(2), int(m.group(1)))}", text)
    text = re.sub(r"( (?:new memor|addition|replacement|memor)\S*(?: [a-z ]+?)?) across ", r"\1 about ", text)
    return cap(_HEX_ID.sub("a draft", text))


def draft_line(d: dict) -> str:
    ops, pending, age = d.get("operations") or 0, d.get("pending"), d.get("age_seconds") or 0
    some = f" ({pending} pending)" if pending is not None and pending != ops else ""
    return " · ".join([n(ops, "operation") + some,
                       f"attempt {d.get('attempt') or 1}" + (" (last)" if d.get("terminal") else ""),
                       "waiting " + ("under a minute" if age < 60 else span(age))])


def queue(drafts: list, now: float, error: Optional[str] = None, as_of: Optional[float] = None) -> dict:
    """The /queue answer: each draft waiting for review, its line, and the note over them; Memory down, what
    its last answer said, as of when (`times`: each "HH:MM" in the words, as its epoch, for the viewer)."""
    out, note = [], "Memory is not answering, so what waits for review cannot be read until it does."
    with times_said() as times:
        # Memory down and never read: the headline names it and why, so the note says only what that means here
        if as_of or not error:
            for d in drafts:
                ops = d.get("operations") or []
                row = {"id": d.get("id"), "summary": d.get("summary"), "attempt": d.get("attempt"),
                       "terminal": d.get("terminal"), "created_at": d.get("created_at"),
                       "age_seconds": max(0.0, now - float(d.get("created_at") or now)), "operations": len(ops),
                       "pending": sum(1 for o in ops if o.get("status", "pending") == "pending"),
                       "kinds": sorted({o.get("kind") for o in ops})}
                out.append({**row, "say": draft_line(row), "title": summary_words(row["summary"]),
                            "kind_words": [kind_words(k) for k in row["kinds"]]})
            waiting = sum(d["pending"] for d in out)
            note = f"{n(out, 'draft')}, {n(waiting, 'operation')} waiting for a decision." if out \
                else "Nothing waits for review."
            if error:
                note = (f"Memory is not answering: as of {hhmm(as_of)}, when it last answered, "
                        + (note[0].lower() + note[1:] if out else "nothing waited for review."))
    return {"count": len(out), "drafts": out, "error": error, "as_of": as_of, "times": times,
            "say": {"level": "bad" if error else "ok", "note": note}}


def group_say(g: dict) -> dict:
    counts = [f"{n(g.get('proposed') or 0, 'operation')} proposed", f"{g.get('approved_first')} approved first time",
              f"{g.get('approved_after_redraft')} after a redraft", f"{g.get('approved_edited')} with edits",
              f"{g.get('denied_to_end')} denied to the end"] + ([f"{g['waiting']} waiting"] if g.get("waiting") else [])
    calls = g.get("calls") or 0
    rates = [f"cut off {pct(g.get('cut_off_rate'))} of {n(calls, 'model call')}" if calls and
             g.get("cut_off_rate") is not None else "no model calls on record"]
    if g.get("invented_rate") is not None:
        rates.append(f"invented numbers in {pct(g.get('invented_rate'))}")
    if g.get("guard_dropped"):
        rates.append(guard.sentence({"dropped": g.get("guard_reasons") or {"unreadable": g["guard_dropped"]}})
                     + " (kept from review)")
    words = ", ".join(f"{w} ({c})" for w, c in g.get("critique_words") or [])
    return {"badge": f"voice card v{g['voice']}" if g.get("voice") else "no voice card",
            "counts": " · ".join(counts), "rates": " · ".join(rates) + (f" · critiques: {words}" if words else "")}


def quality(rep: dict) -> dict:
    """The /quality answer: the report, each group's words and the note over them."""
    err = rep.get("error")
    if not rep.get("ready"):
        note = "Memory's drafts could not be read, so there is no report yet." if err \
            else "Reading the reviews in Memory…"
    elif not rep.get("groups"):
        note = "No drafts on record yet."
    else:
        note = (f"{n(rep.get('drafts') or 0, 'draft')} on record; each operation counts under the model and card "
                "of the draft that first proposed it." + (" (not refreshed: Memory did not answer)" if err else ""))
    return {**rep, "groups": [{**g, "say": group_say(g)} for g in rep.get("groups") or []],
            "say": {"level": "bad" if err else "ok", "note": note}}


# what an event's `count` counts, by its type (a nudge burst is one event whose count grows)
COUNTED = {"nudged": ("nudge", "nudges in a row"), "purged": ("flagged memory purged", "flagged memories purged"),
           "restored": ("memory restored", "memories restored")}


def _facts(e: dict) -> list:
    has = {k: e.get(k) is not None for k in ("operations", "count", "attempt", "landed", "restarts")}
    count = n(int(e.get("count") or 0), *COUNTED.get(e.get("type"), ("time", "times")))
    bits = [(e.get("actor"), ACTOR_WORDS.get(e.get("actor"), "a part of the service")),
            (has["operations"], n(e.get("operations") or 0, "operation")), (has["count"], count),
            (has["attempt"], f"attempt {e.get('attempt')}"), (has["landed"], f"{e.get('landed')} landed"),
            (e.get("denied"), f"{e.get('denied')} denied"), (has["restarts"], n(e.get("restarts") or 0, "restart")),
            (e.get("by"), f"by {e.get('by')}"), (e.get("quiet"), "quiet"), (e.get("catch_up"), "catch-up"),
            (e.get("words"), str(e.get("words"))), (e.get("topic"), f"topic {e.get('topic')}"),
            (e.get("how"), str(e.get("how"))), (e.get("due_at"), f"for the sleep due at {hhmm(e.get('due_at'))}"),
            (isinstance(e.get("nudge"), int) and e.get("nudge"),
             f"asked again ({n(e.get('nudge'), 'reminder')} so far)"),
            (e.get("woke") is not None and e.get("type") == "nudged",
             "a turn started at once" if e.get("woke") else
             "noted: the part that keeps the schedule was down, and takes it when it is back")]
    return [words for on, words in bits if on]


def outcome(kind: str, o: Optional[dict]) -> str:
    """What the webhook or the ripple did with an event."""
    if not o:
        return ""
    if kind == "webhook":
        return "webhook sent" if o.get("delivered") else "webhook not sent" + (f" ({o['error']})" if o.get("error")
                                                                             else "")
    if o.get("dropped"):        # a kept one made needless while it waited (the brief it asked for arrived)
        return f"ripple not fired: {o['dropped']}"
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
    return {"note": "A webhook is set; each event says whether it was sent." if webhook else ""}


def guard_words(r: dict) -> str:
    """What the grounding guard kept from review, and the promoted piles kept for the next sleep ("" if neither)."""
    bits = [guard.sentence(r.get("guard"))]
    if kept := r.get("kept_back"):
        topics = ", ".join(f"'{k.get('topic') or 'untagged'}'" for k in kept)
        bits.append(f"{n(sum(int(k.get('fragments') or 0) for k in kept), 'fragment')} on {topics} kept for the "
                    f"next sleep, not aged out: the brief promoted {'it' if len(kept) == 1 else 'them'} and "
                    f"{kept[0].get('why') or 'nothing was drafted'}")
    return "; ".join(b for b in bits if b)


def sleep_words(r: dict) -> str:
    if r.get("interrupted"):
        return r["interrupted"] if r.get("other") else "interrupted by a stop: nothing was posted and its brief is kept"
    if r.get("error"):
        return f"failed: {r['error']}" + (" (its brief is kept for the next check)" if r.get("brief_id") else "")
    more = guard_words(r)
    more = f"; {more}" if more else ""
    if r.get("budget"):
        left = r["budget"].get("undrafted")
        kept = [f"{n(len(left), 'pile')} not drafted kept for the next sleep"] if left else []
        kept += ["the brief stays open"] if r.get("brief_id") else []     # a sleep by hand may have had none
        more += f"; stopped drafting early: {r['budget'].get('reason')}" + (f"; {', and '.join(kept)}" if kept else "")
    if r.get("draft_id"):
        catch = "; the first sleep in a long while, so no fragment was let fade" if r.get("catch_up") else ""
        catch += "; finished after a restart" if r.get("resumed") else ""
        return f"drafted {n(r.get('operations') or 0, 'operation')} for review{catch}{more}"
    if r.get("quiet"):
        return "quiet: no fresh fragments to sleep on"
    if r.get("budget"):
        return "drafted nothing" + more
    below = r.get("below_threshold") or 0
    return ("slept, nothing worth drafting" + (f" ({n(below, 'fragment')} below the evidence bar)" if below else "")
            + more)


# what a tend did, in this order: (the report's count, its words, what it counts)
TEND_BITS = (("resubmitted", "redrafted {}", "chain"), ("closed", "closed {}", "chain"),
             ("ended", "{} ended with denials", "chain"), ("deferred", "{} waiting for sleep time", "redraft"),
             ("model_failures", "the model could not write {}", "redraft"))
CYCLE_DEFERRED = "{} waiting for the tend cycle's next turn"       # a deferred redraft with sleep.tend_cycle on


def tend_words(r: dict, cycle: bool = False) -> str:
    if r.get("interrupted"):
        return "interrupted by a stop: nothing was posted"
    bits = [(CYCLE_DEFERRED if cycle and key == "deferred" else words).format(n(r[key], noun))
            for key, words, noun in TEND_BITS if r.get(key)]
    bits += [f"in the redrafts {guard.sentence(r['guard'])}"] if guard.sentence(r.get("guard")) else []
    if r.get("error"):
        return f"failed: {r['error']}" + (f" ({', '.join(bits)})" if bits else "")
    if r.get("under_review") and not bits:
        return f"{n(r['under_review'], 'draft')} still under review in Memory"
    return ", ".join(bits) if bits else "quiet: nothing to tend"


def run_words(r: dict) -> str:
    """One row of the history: the sleep's or the tend's words, with what a sleep purged and a catch-up."""
    if r.get("kind") != "sleep":
        return tend_words(r)
    words = sleep_words(r)
    extra = [f"purged {r['purged']}"] if r.get("purged") else []
    if r.get("catch_up") and "catch-up" not in words:
        extra.append("catch-up")
    return " · ".join([words] + extra)


def restart_words(name: str) -> str:
    """The answer to a restart asked for: always in the background (front.restart answers at once)."""
    return (f"{name} is being restarted in the background (a busy one's current work gets up to 10 s to end "
            f"first); its state on the Actors card and in the status shows running again when it is back.")


CHECK = {"sleeping": "slept on a brief", "sleeping_on_pulled_brief": "slept on a brief the small model wrote",
         "chain_open": "a chain is open, so no new sleep yet", "not_bedtime": "not bedtime yet",
         "waiting_for_brief": "past bedtime, waiting for a brief", "error": "failed",
         "waiting_for_model": "waiting to try the model's start again", "other_copy": "another copy is sleeping",
         "waiting_after_failure": "the last sleep on this brief failed, so its next try waits "
                                  "(Sleep now tries at once)",
         "budget_rest": "the last night ran out of its budget (sleep.budget), so the next sleep waits for bedtime"}


def check_words(r: dict) -> str:
    status = r.get("status")
    head = another_copy(r["other"], "is sleeping") if status == "other_copy" and r.get("other") else \
        CHECK.get(status, status or "checked")         # what the other copy does: asks for a brief, pulls one...
    head += f"; {r['error']}" if r.get("error") else ""    # a failed pull
    if status == "error":
        return f"the check failed: {r.get('error')}"
    if r.get("sleep"):
        head += "; " + sleep_words(r["sleep"])
    if r.get("purged"):
        head += f"; purged {n(r['purged'], 'flagged memory', 'flagged memories')}"
    return head


def result(kind: str, r: dict) -> dict:
    """{"level", "text"} for the answer to a sleep, tend or check asked for by hand."""
    if r.get("asked_for_brief"):
        return {"level": "ok", "text": cap(ASKED_FOR_BRIEF) + "."}
    if r.get("refused"):
        return {"level": "warn", "text": f"Nothing started: {r.get('message') or 'a chain is open'}."}
    if kind == "sleep" and r.get("status") == "error" and r.get("message"):     # refused before any sleep began
        why = f" ({r['error']})" if r.get("error") and r["error"] not in r["message"] else ""
        return {"level": "bad", "text": cap(r["message"]).rstrip(".") + why + "."}
    words = {"sleep": sleep_words, "tend": tend_words, "check": check_words}[kind](r)
    failed = bool(r.get("error")) or r.get("status") == "error" or bool((r.get("sleep") or {}).get("error")) or (
        kind == "tend" and bool(r.get("model_failures")))            # a redraft the model could not write
    did = bool(r.get("draft_id") or r.get("resubmitted") or r.get("closed") or (r.get("sleep") or {}).get("draft_id"))
    prefix = {"sleep": "The sleep ", "tend": "Tended: ", "check": "Checked: "}[kind]
    text = (prefix + words) if kind != "sleep" else ("The sleep " + words if failed else cap(words))
    return {"level": "bad" if failed else "good" if did else "ok", "text": text.rstrip(".") + "."}
