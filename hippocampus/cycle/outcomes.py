"""What a sleep, a redraft and a chain's end did, as one log line each in a person's words, written where the
outcome is recorded. Pure wording (`*_line` returns the level and the sentence) plus the one call that logs it;
a line names what happened and what happens next, never a field name."""
from __future__ import annotations

import logging
from typing import Optional

from hippocampus.cycle.reports import SleepReport
from hippocampus.words import failed_wait_words, hhmm, n

log = logging.getLogger(__name__)

KINDS = {"new_core": ("new memory", "new memories"), "attach": ("addition to a memory", "additions to memories"),
         "supersede": ("replacement", "replacements"), "verbatim": ("kept word for word", "kept word for word")}


def _kinds(kinds: dict) -> str:
    parts = [n(c, *KINDS.get(k, (k.replace("_", " "), k.replace("_", " ")))) for k, c in sorted(kinds.items()) if c]
    return f" ({', '.join(parts)})" if parts else ""


def _on_what(r: SleepReport) -> str:
    if not r.brief_id:
        return "slept without a brief"
    return f"slept on {'a brief the small model wrote' if r.brief_pulled else 'brief'} {r.brief_id}"


def retry_words(at: Optional[float]) -> str:
    if not at:
        return ""
    return (f"; the model's start is tried again at {hhmm(at)} "
            "(model.lifecycle.retry_after_seconds), and the checks until then start no sleep")


def wait_words(r: SleepReport) -> str:
    """When a failed sleep's brief is tried again (sleep.wait_after), or "" when the next check tries it."""
    if not r.next_try_at:
        return ""
    return "; " + failed_wait_words(r.failures, r.next_try_at)


def budget_words(b: dict, brief_id: Optional[str] = None) -> str:
    """Why a night stopped drafting, naming the setting, and what it kept."""
    left = b.get("undrafted") or []
    kept = (f"; {n(len(left), 'pile')} not drafted ({n(sum(p.get('fragments') or 0 for p in left), 'fragment')}) "
            "stay in short-term for the next sleep" if left else "")
    brief = f", and brief {brief_id} stays open" if brief_id else ""
    rest = f"; the next sleep waits for bedtime, {hhmm(b['rest_until'])}" if b.get("rest_until") else ""
    return f"the night stopped drafting early: {b.get('reason')}{kept}{brief}{rest}"


def sleep_line(r: SleepReport) -> Optional[tuple]:
    """(level, sentence) for a sleep that ended; None for one interrupted (it says so where it stopped)."""
    if r.interrupted:
        return None
    if r.budget and not r.error:
        done = (f"drafted {n(r.operations, 'operation')}{_kinds(r.kinds)} for review (draft {r.draft_id}) before"
                if r.draft_id else "drafted nothing before")
        return logging.WARNING, f"{_on_what(r)}: {done} {budget_words(r.budget, r.brief_id)}"
    if r.error:
        kept = f"; its brief {r.brief_id} is kept for the next sleep" if r.brief_id else \
            "; no brief was involved, and a sleep by hand can be asked again"
        return logging.ERROR, f"the sleep failed: {r.error}{kept}{retry_words(r.retry_at)}{wait_words(r)}"
    extra = [f"purged {n(r.purged, 'flagged memory', 'flagged memories')} first"] if r.purged else []
    if r.quiet and not r.draft_id:
        held = f"; {n(r.held_back, 'fragment')} wait in a draft under review" if r.held_back else ""
        return logging.INFO, f"quiet sleep: nothing new to draft{held}" + (f" ({extra[0]})" if extra else "")
    if r.catch_up:
        extra.append("the first sleep in a while, so old fragments are kept")
    if r.resumed:
        extra.append("finished after a restart")
    tail = f" ({'; '.join(extra)})" if extra else ""
    if r.draft_id:
        topics = f" on {n(r.clusters, 'topic')}" if r.clusters else ""
        return logging.INFO, (f"{_on_what(r)}: drafted {n(r.operations, 'operation')}{_kinds(r.kinds)}{topics} "
                              f"for review (draft {r.draft_id}); the main model reviews it in Memory{tail}")
    below = f" ({n(r.below_threshold, 'fragment')} below the evidence bar)" if r.below_threshold else ""
    after = (f"; brief {r.brief_id} matched nothing and is set aside for a new one" if r.brief_id and r.brief_unmatched
             else f"; brief {r.brief_id} is answered" if r.brief_id and not r.brief_pulled else "")
    return logging.INFO, f"{_on_what(r)}: nothing worth drafting{below}{after}{tail}"


def redraft_line(resubmitted: dict, denied: int, withdrawn: int, max_attempts: int) -> str:
    """A chain's redraft, resubmitted for review."""
    attempt = resubmitted.get("attempt") or 0
    last = ", the last: what is denied now stays denied" if resubmitted.get("terminal") else ""
    gone = f", {n(withdrawn, 'operation')} withdrawn" if withdrawn else ""
    return (f"redrafted {n(denied - withdrawn, 'denied operation')}{gone} (attempt {attempt} of {max_attempts}{last}): "
            f"draft {resubmitted.get('draft_id')} of chain {resubmitted.get('cluster_id')} waits for review")


def redraft_failed_line(cluster_id: str, failures: list) -> str:
    whys = "; ".join(f"{f.get('topic') or 'untagged'}: {f.get('why')}" for f in failures[:3])
    return (f"the redraft of chain {cluster_id} failed: the model could not rewrite "
            f"{n(len(failures), 'denied operation')} ({whys}); nothing was posted and the chain waits for the "
            "next tend")


def chain_closed_line(record: dict) -> str:
    """A chain's end: what landed, what stayed denied."""
    landed, denied, attempts = record.get("landed") or 0, record.get("denied") or 0, record.get("attempts") or 0
    return (f"chain closed: {landed} landed, {denied} denied, after {n(attempts, 'attempt')} "
            f"(chain {record.get('cluster_id')}, last draft {record.get('last_draft_id')})")


def say_sleep(report: SleepReport) -> None:
    said = sleep_line(report)
    if said:
        log.log(*said)
