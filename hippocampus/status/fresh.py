"""What the narrator takes from the freshest read, so no card contradicts another or the headline: the queue
watch's read of Memory (newer than the tick's snapshot) over the snapshot, the model watch's over a failed
sleep's words, "as of" while Memory is down, and the main button that fits the state. Pure."""
from __future__ import annotations

from typing import Optional

from hippocampus.status.words import cap, hhmm
from hippocampus.words import busy as running


def buttons(s: dict, action: Optional[str]) -> dict:
    """Which of Sleep now and Tend now is the main button, and which cannot be pressed now and why: Sleep now
    when idle; Tend now (or none) while a chain is open; neither, with the reason, while a cycle runs or
    Memory is down."""
    why = ""
    if (s.get("memory") or {}).get("reachable") is False:
        why = "Memory is not answering: nothing can start until it does."
    elif s.get("busy"):
        why = f"{cap(running(s['busy'].get('what'), s['busy'].get('since')))}: wait for it to end."
    chain = s.get("chain") or {}
    open_ = bool(chain.get("chain_open") or chain.get("waiting_draft") or chain.get("redrafts_due"))
    return {"sleep": {"primary": not why and action == "sleep" and not open_, "disabled": bool(why)},
            "tend": {"primary": not why and action == "tend", "disabled": bool(why)}, "why": why}


def _newer(s: dict) -> dict:
    """The queue watch's read when it answered and is newer than the tick's snapshot; else {}."""
    review = s.get("review") or {}
    fresh = review.get("checked_at") and float(review["checked_at"]) >= float((s.get("chain") or {}).get("at") or 0)
    return review if fresh and not review.get("error") else {}


def reviewed_since(s: dict) -> bool:
    """The draft the chain waits on is no longer pending in Memory: the queue's read, newer than the tick's
    snapshot, no longer has it (it was approved, denied or withdrawn there)."""
    waiting, review = (s.get("chain") or {}).get("waiting_draft") or {}, _newer(s)
    return bool(waiting and review) and waiting.get("id") not in set(review.get("drafts") or [])


def brief_arrived(s: dict) -> bool:
    """The queue watch's read, newer than the tick's snapshot, holds more open briefs than that snapshot (with no
    chain open): one arrived since (written without a nudge, or before the next tick)."""
    chain, review = s.get("chain") or {}, _newer(s)
    if not chain or chain.get("chain_open") or not review:
        return False
    return len(review.get("briefs") or []) > int(chain.get("open_briefs") or 0)


def model_back(s: dict, since: Optional[float]) -> bool:
    """The model watch saw the model answering after `since`."""
    m = s.get("model_health") or {}
    return bool(m.get("answering")) and float(m.get("checked_at") or 0) >= float(since or 0)


def as_of(s: dict) -> str:
    """" · as of 14:02" while Memory is down: what Memory said when it last answered."""
    mem = s.get("memory") or {}
    if mem.get("reachable") is not False:
        return ""
    at = mem.get("up_at") or (s.get("chain") or {}).get("at")
    return f" · as of {hhmm(at)}" if at else " · not read from Memory yet"


def brief_when(s: dict, now: float) -> str:
    """When a waiting brief is slept on: a night that ran out of its budget holds the checks until bedtime, a
    failed sleep its own brief until its wait is over (sleep.wait_after)."""
    last = s.get("last_sleep") or {}
    rest = (last.get("budget") or {}).get("rest_until") or 0
    if rest > now:
        return f"at bedtime, {hhmm(rest)}, as the last night ran out of its budget (Sleep now does it at once)"
    waiting = (s.get("chain") or {}).get("brief_id")
    if last.get("error") and waiting and waiting == last.get("brief_id") and (last.get("next_try_at") or 0) > now:
        return f"at {hhmm(last['next_try_at'])}, as the last sleep on it failed (Sleep now does it at once)"
    # with no clock of its own (external mode) only a nudge or a button starts a check
    return "at the next nudge (Sleep now does it at once)" if s.get("mode") == "external" else "at the next check"


def pull_when(s: dict, joint: str) -> str:
    """With sleep.brief_pull: when the small model writes the brief itself (at the brief_check_misses-th check)."""
    after = s.get("brief_pull_after")
    if not after:
        return ""
    left, turn = after - int(s.get("brief_misses") or 0), "nudge" if s.get("mode") == "external" else "check"
    return f"{joint}the small model writes one from the fragments " + (
        f"at the next {turn}" if left <= 1 else f"in {left} {turn}s")
