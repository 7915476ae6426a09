"""The words for one sleep, tend or check report: the viewer's result line, MCP's message, a history row."""
from __future__ import annotations

from hippocampus.status.words import cap, n, short


def sleep_words(r: dict) -> str:
    if not r:
        return "never slept yet"
    if r.get("interrupted"):
        return "interrupted by a stop: nothing was posted and its brief is kept"
    if r.get("error"):
        return f"failed: {r['error']} (its brief is kept for the next check)"
    if r.get("draft_id"):
        catch = "; a catch-up: nothing aged out" if r.get("catch_up") else ""
        catch += "; finished after a restart" if r.get("resumed") else ""
        return f"drafted {n(r.get('operations') or 0, 'operation')} (draft {short(r['draft_id'])}){catch}"
    if r.get("quiet"):
        return "quiet: no fresh fragments to sleep on"
    below = r.get("below_threshold") or 0
    return "slept, nothing worth drafting" + (f" ({n(below, 'fragment')} below the evidence bar)" if below else "")


# what a tend did, in this order: (the report's count, its words, what it counts)
TEND_BITS = (("resubmitted", "redrafted {}", "chain"), ("closed", "closed {}", "chain"),
             ("ended", "{} ended with denials", "chain"), ("deferred", "{} waiting for sleep time", "redraft"),
             ("model_failures", "the model could not write {}", "redraft"))


def tend_words(r: dict) -> str:
    if not r:
        return "never tended yet"
    if r.get("interrupted"):
        return "interrupted by a stop: nothing was posted"
    bits = [words.format(n(r[key], noun)) for key, words, noun in TEND_BITS if r.get(key)]
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


def restart_words(name: str, out: dict) -> str:
    return f"{name} restarted: {out.get('state') or 'starting'}."


CHECK = {"sleeping": "slept on a brief", "sleeping_on_pulled_brief": "slept on a brief the small model wrote",
         "chain_open": "a chain is open, so no new sleep yet", "not_bedtime": "not bedtime yet",
         "waiting_for_brief": "past bedtime, waiting for a brief", "error": "failed",
         "waiting_for_model": "waiting to try the model's start again", "other_copy": "another copy is sleeping"}


def check_words(r: dict) -> str:
    status = r.get("status")
    head = CHECK.get(status, status or "checked")
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
        return {"level": "ok", "text": "No brief was waiting, so nothing was drafted blind: a note in Memory asks "
                                       "the main model for one, and the sleep runs once it arrives."}
    if r.get("refused"):
        return {"level": "warn", "text": f"Nothing started: {r.get('message') or 'a chain is open'}."}
    words = {"sleep": sleep_words, "tend": tend_words, "check": check_words}[kind](r)
    failed = bool(r.get("error")) or r.get("status") == "error" or bool((r.get("sleep") or {}).get("error"))
    did = bool(r.get("draft_id") or r.get("resubmitted") or r.get("closed") or (r.get("sleep") or {}).get("draft_id"))
    prefix = {"sleep": "The sleep ", "tend": "Tended: ", "check": "Checked: "}[kind]
    text = (prefix + words) if kind != "sleep" else ("The sleep " + words if failed else cap(words))
    return {"level": "bad" if failed else "good" if did else "ok", "text": text.rstrip(".") + "."}
