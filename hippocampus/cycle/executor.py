"""The tick's one executor: read the snapshot once, decide once, run every step through one table. The chain's
part (tend) and the rest (check, a sleep by hand) each end as a report; Memory is read again only if it changed."""
from __future__ import annotations

import contextlib
import logging
import time
from dataclasses import dataclass
from typing import Callable, Optional

from hippocampus.cycle import briefs, claims, sleep, tend as tending
from hippocampus.cycle.chains import REVIEW
from hippocampus.cycle.drafter import first_draft_id
from hippocampus.cycle.decide import (ASK_BRIEF, CHAIN_STEPS, CLOSE, DEFER, FINISH_CLOSE, FINISH_SUBMIT, MISS,
                                      NOT_BEDTIME, PURGE, REDRAFT, SLEEP, WAIT_CHAIN, Asked, decide)
from hippocampus.cycle.reports import CheckReport, SleepRefused, SleepReport, TendReport
from hippocampus.cycle.snapshot import Snapshot, read_for
from hippocampus import transport_words
from hippocampus.memory import MemoryError_, MemoryRefused, MemoryUnavailable, NotSerenMemory
from hippocampus.stopping import ServiceStopping
from hippocampus.words import ASKED_FOR_BRIEF

log = logging.getLogger(__name__)


@dataclass
class Out:
    """What the steps of one part fill in."""
    tend: Optional[TendReport] = None
    check: Optional[CheckReport] = None
    purged: Optional[list] = None               # the check's purge, handed to its sleep
    answer: Optional[SleepRefused] = None       # a sleep by hand that asked for a brief instead
    by_hand: bool = False                       # a person asked, so a held model is tried anyway


def plan(ctx, asked: Asked) -> tuple:
    """(the snapshot, the steps): the one read of Memory and the one decision."""
    snap = read_for(ctx)
    return snap, decide(snap, ctx.state, ctx.cfg.sleep, ctx.clock.now(), asked)


def _purge(ctx, snap, step, out: Out) -> None:
    out.purged = sleep.purge(ctx)
    out.check.purged = len(out.purged)


def _wait_chain(ctx, snap, step, out: Out) -> None:
    out.check.status, out.check.brief_id = "chain_open", (snap.brief or {}).get("id")


def _sleep(ctx, snap, step, out: Out) -> None:
    """A brief's sleep, or (MISS) past bedtime with none, the miss and a brief the small model pulls (brief_pull):
    either through the same holds (the model held after a failed start, a budget's rest, the brief's claim)."""
    pull = step.kind == MISS
    if pull and not briefs.no_brief(ctx, step, out.check):
        return
    brief_id, now, last = (step.brief or {}).get("id"), ctx.clock.now(), ctx.state.get("last_sleep") or {}
    # waiting_for_model: its sleep_failed said when the model is tried again, the ticks meanwhile add nothing;
    # budget_rest: the last night ran out of its budget, the next waits for bedtime; waiting_after_failure: the
    # last sleep on this brief failed, the next try waits (sleep.wait_after)
    waits = () if out.by_hand else (("waiting_for_model", None if ctx.mechanical else ctx.gate.held_until(now)),
                                    ("budget_rest", (last.get("budget") or {}).get("rest_until")),
                                    ("waiting_after_failure", sleep.failed_wait(last, brief_id)))
    wait = next(((status, at) for status, at in waits if at and at > now), None)
    if wait:
        out.check.status, out.check.retry_at, out.check.brief_id = *wait, brief_id
        return
    brief, claim = (briefs.pull(ctx, snap, out.check, lambda bid: _claim_brief(ctx, bid, out)) if pull else
                    (step.brief, _claim_brief(ctx, brief_id, out) if brief_id else None))
    if claim is None and (pull or brief_id):
        return
    out.check.status, out.check.brief_id = "sleeping_on_pulled_brief" if pull else "sleeping", (brief or {}).get("id")
    ctx.state.set(brief_misses=0)
    try:
        out.check.sleep = sleep.run_sleep(ctx, brief, snap, pulled=pull, purged=out.purged, claim=claim)
    finally:
        if claim is not None:
            claim.release()


def _claim_brief(ctx, brief_id: str, out: Out) -> Optional[claims.Claim]:
    """This copy's claim on the brief, or None (the check says so) when another copy sleeps on it or has."""
    try:
        held = claims.claim(ctx, f"brief:{brief_id}", f"sleeps on brief {brief_id}")
    except claims.Taken as exc:
        out.check.status, out.check.brief_id, out.check.other = "other_copy", brief_id, exc.other
        return None
    by = None if claims.alone(ctx) else claims.drafted_by(ctx, first_draft_id(ctx, brief_id))
    if by is not None:                                        # by a copy now done with it
        held.release()
        out.check.status, out.check.brief_id = "other_copy", brief_id
        out.check.other = {**by, "what": f"has drafted brief {brief_id} already"}
        return None
    return held


def _chain_claimed(run: Callable) -> Callable:
    """A chain step run by one copy only, and only on a chain that has not moved on in Memory since the snapshot."""
    def step_run(ctx, snap, step, out: Out) -> None:
        cid = step.chain.cluster_id
        try:
            held = claims.claim(ctx, f"chain:{cid}", f"tends chain {cid}")
        except claims.Taken:
            return
        try:        # alone (now None): no other copy to have moved it since this tick's snapshot
            now = None if isinstance(held, claims.Alone) else ctx.memory.draft_chain(step.chain.latest["id"])
            if now is None or (len(now) == len(step.chain.attempts)
                               and now[-1].get("status") == step.chain.latest.get("status")):
                run(ctx, snap, step, out)
        finally:
            held.release()          # nothing to let go for a copy alone
    return step_run


def _defer(ctx, snap, step, out: Out) -> None:
    out.tend.redraft = False
    out.tend.deferred.append(step.chain.cluster_id)


def _ask_brief(ctx, snap, step, out: Out) -> None:
    try:
        briefs.hold_request(ctx)         # kept as the tick's ask keeps it
        req = briefs.request_brief(ctx, force=True)
    except claims.Taken as exc:      # that copy's note asks already: a second would wake the main model twice
        out.answer = SleepRefused("other_copy", f"no brief was waiting, and {claims.sentence(exc.other)} already, "
                                  "so this copy asked nothing and started nothing; the sleep starts at a check "
                                  "after that brief arrives (or sleep with without_brief=true to draft unsteered now)")
        return
    except MemoryRefused as exc:     # never a 500: nothing was started (Memory down: the sleep by hand says so)
        out.answer = SleepRefused("error", "no brief was waiting and Memory did not take the request for one; "
                                  "nothing was started", error=f"could not ask the main model for a brief: {exc}")
        return
    out.answer = SleepRefused("asked_for_brief", f"{ASKED_FOR_BRIEF} (or sleep with without_brief=true to draft "
                              "unsteered now)", intent_id=req.get("intent_id"))


HANDLERS: dict = {
    FINISH_SUBMIT: lambda ctx, snap, step, out: sleep.resume_submit(ctx, snap),
    FINISH_CLOSE: lambda ctx, snap, step, out: tending.finish_closing(ctx, step.cluster_id, out.tend, snap),
    CLOSE: _chain_claimed(lambda ctx, snap, step, out: tending.close_chain(ctx, step.chain, out.tend, why=None,
                                                                           snap=snap)),
    REDRAFT: _chain_claimed(lambda ctx, snap, step, out: tending.redraft(ctx, step.chain, out.tend, snap)),
    DEFER: _defer,
    PURGE: _purge,
    WAIT_CHAIN: _wait_chain,
    SLEEP: _sleep,
    NOT_BEDTIME: lambda ctx, snap, step, out: briefs.no_brief(ctx, step, out.check),
    MISS: _sleep,
    ASK_BRIEF: _ask_brief,
}


def _run(ctx, snap: Snapshot, steps, out: Out) -> None:
    for step in steps:
        HANDLERS[step.kind](ctx, snap, step, out)


def _done(ctx, report):
    """After a part that changed Memory's drafts or briefs, read the snapshot again (for /status): the drafts, and
    the briefs only if the part changed them."""
    if report.memory_changed:
        last = ctx.last_snapshot
        with contextlib.suppress(Exception):        # the next tick reads it again
            read_for(ctx, briefs=None if report.briefs_changed or last is None else last.briefs)
    return report


def tend(ctx, asked: Asked = Asked(check=False)) -> TendReport:
    """POST /tend: read Memory, decide, run the chain's steps."""
    return _tended(ctx, asked.redraft, lambda: plan(ctx, asked))


def _tended(ctx, redraft, read: Callable) -> TendReport:
    report = TendReport(started_at=ctx.clock.now(), redraft=redraft)
    t0 = time.monotonic()
    stopped: Optional[ServiceStopping] = None
    try:
        snap, steps = read()
        report.examined, report.under_review = len(snap.chains), [c.cluster_id for c in snap.chains_to(REVIEW)]
        _run(ctx, snap, steps, Out(tend=report))
    except ServiceStopping as exc:       # nothing was posted, the chain waits
        stopped, report.interrupted = exc, str(exc)
        log.warning("the tend was interrupted: %s; the chain waits for the next start", exc)
        ctx.emit("tend_interrupted", why=str(exc))
    except Exception as exc:  # noqa: BLE001 - the tend reports, the chain waits for the next one
        report.error = transport_words.in_words(exc)
        log.error("the tend failed: %s", report.error)
    report.finished_at = ctx.clock.now()
    report.duration_seconds = round(time.monotonic() - t0, 3)
    tending.record(ctx, report)
    if stopped:
        raise stopped
    return _done(ctx, report)


def failed_check(ctx, report: CheckReport, exc: Exception) -> CheckReport:
    report.status, report.error = "error", transport_words.in_words(exc)
    log.error("the check failed: %s", report.error)
    ctx.state.set(last_check=report.kept())
    return report


def check(ctx) -> CheckReport:
    """POST /check: read Memory, decide, run the check's steps."""
    briefs.note_first_check(ctx, ctx.clock.now())
    return _checked(ctx, lambda: plan(ctx, Asked(tend=False)))


def check_steps(ctx, snap: Snapshot, steps) -> CheckReport:
    """The sleeper's part of a tick (purge, the brief gate, the sleep), on the tick's snapshot."""
    return _checked(ctx, lambda: (snap, steps))


def _checked(ctx, read: Callable) -> CheckReport:
    out = Out(check=CheckReport(at=ctx.clock.now(), misses=ctx.state.get("brief_misses") or 0))
    try:
        snap, steps = read()
        _run(ctx, snap, steps, out)
        out.check.misses = ctx.state.get("brief_misses") or 0
    except ServiceStopping:
        raise                   # not a failed check: the sleep it started recorded the interruption
    except Exception as exc:  # noqa: BLE001 - a failed check is reported, never raised into the tick
        return _done(ctx, failed_check(ctx, out.check, exc))
    ctx.state.set(last_check=out.check.kept())
    return _done(ctx, out.check)


def sleep_by_hand(ctx, ask_for_brief: bool = True) -> SleepReport | SleepRefused:
    """POST /sleep: with no brief waiting, ask for one instead of drafting blind."""
    out = Out(check=CheckReport(at=ctx.clock.now()), by_hand=True)
    try:
        snap, steps = plan(ctx, Asked(tend=False, check=False, by_hand=True, ask_for_brief=ask_for_brief))
        _run(ctx, snap, steps, out)
    except MemoryError_ as exc:         # never a 500: nothing was started
        if isinstance(exc, MemoryUnavailable) and not isinstance(exc, NotSerenMemory):    # Memory down: a 503
            return SleepRefused("memory_down", "nothing was started", error=str(exc).removeprefix("SerenMemory "))
        return SleepRefused("error", f"nothing was started: {exc}", error=f"nothing was started: {exc}")
    if out.check.status == "chain_open":
        waiting = snap.open_chain
        state = "under review" if waiting.action == REVIEW else "waiting for a redraft"
        return SleepRefused("chain_open", f"a chain is open (draft {waiting.latest.get('id')} is "
                            f"{state}): one cycle at a time, so nothing was started; "
                            "it sleeps again once that chain lands", draft_id=waiting.latest.get("id"))
    if out.check.sleep is None and out.answer is None:     # never a 500: say what the check found instead
        return _held_elsewhere(out.check)
    return _done(ctx, out.check.sleep or out.answer)


def _held_elsewhere(check: CheckReport) -> SleepRefused:
    """A sleep by hand that started nothing because another copy holds the brief (or for what the check says)."""
    if check.status == "other_copy":
        other = check.other or {}
        return SleepRefused("other_copy", f"{claims.sentence(other)}{claims.until_words(other)}, so this copy "
                            "started nothing (two copies on one Memory take turns; stop one of them unless you "
                            "meant to run both)")
    return SleepRefused("error", f"nothing was started: the check found {check.status or 'nothing to do'}",
                        error=check.error or f"nothing was started: the check found {check.status}")


@dataclass
class TickPart:
    """What the chain's part of a tick hands the sleeper's: the snapshot, the steps left, the tend's report."""
    snap: Optional[Snapshot] = None
    rest: tuple = ()
    tended: Optional[TendReport] = None         # None: the tend did not end (a stop, or it failed)
    failed: Optional[CheckReport] = None        # Memory could not be read: nothing ran


def tick_chain(ctx, asked: Asked) -> TickPart:
    """The chain's part of a tick: the tick's one read of Memory, its one decision, the chain's steps."""
    now = ctx.clock.now()
    briefs.note_first_check(ctx, now)
    try:
        snap, steps = plan(ctx, asked)
    except MemoryError_ as exc:
        return TickPart(failed=failed_check(ctx, CheckReport(at=now, misses=ctx.state.get("brief_misses") or 0), exc))
    chain = tuple(s for s in steps if s.kind in CHAIN_STEPS)
    tended = _part("tend", lambda: _tended(ctx, True, lambda: (snap, chain))) if chain else TendReport(started_at=now)
    return TickPart(snap, tuple(s for s in steps if s.kind not in CHAIN_STEPS), tended)


def tick_rest(ctx, part: TickPart) -> tuple:
    """The sleeper's part of a tick: (the tend's report, the check's, is a chain open now). None from a part
    (it did not end) never counts as "no chain open" (a sleep would lose its model)."""
    if part.failed is not None:
        return None, part.failed, True
    checked = _part("check", lambda: check_steps(ctx, part.snap, part.rest))
    if part.tended is None or checked is None:
        return part.tended, checked, True
    drafted = bool(part.tended.resubmitted) or bool(checked.sleep and checked.sleep.draft_id)
    return part.tended, checked, part.snap.chain_open or drafted


def tick(ctx, asked: Asked) -> tuple:
    """One whole tick on this thread (the service runs its two parts on the chain and the sleeper)."""
    return tick_rest(ctx, tick_chain(ctx, asked))


def _part(what: str, run: Callable):
    """A part of a tick: its report, or None when a stop cut it short or it failed (a tick never dies of one)."""
    try:
        return run()
    except ServiceStopping:
        return None
    except Exception as exc:  # noqa: BLE001
        log.error("the %s failed in the tick: %s", what, exc)
        return None
