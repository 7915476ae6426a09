"""One sleep: purge, read the free fragments, cluster, draft, submit, tidy. It submits one whole draft or fails
and keeps its brief; the draft id is recorded before the POST, so a restart finishes it instead of drafting again."""
from __future__ import annotations

import contextlib
import logging
import time
import uuid
from collections import Counter
from typing import Optional

from hippocampus.cycle import briefs, budget, claims, outcomes, parallel
from hippocampus.cycle.bedtime import bedtime, bedtime_at, is_catch_up, last_slept
from hippocampus.cycle.context import Context
from hippocampus.cycle.notes import sane_time
from hippocampus.cycle.reports import SleepReport
from hippocampus import transport_words
from hippocampus.memory import MemoryError_, MemoryRefused, MemoryUnavailable
from hippocampus.store import capture, scrub
from hippocampus.store.state import history_with
from hippocampus.stopping import ServiceStopping
from hippocampus.words import FAILED_WAIT_MAX_SECONDS, whole
from hippocampus.cycle.drafter import extend_ops, first_draft_id, landed_late, model_key, say_dropped, stamp, \
    submittable
from hippocampus.drafting import guard
from hippocampus.model import grounded, timings
from hippocampus.model.client import ModelUnavailable
from hippocampus.drafting.prompt import Steer
from hippocampus.drafting.propose import mechanical_ops, plan_sleep, whole_clusters

log = logging.getLogger(__name__)
REVIEW_TOPIC = "hippocampus, review"


def review_note_id(draft_id: str) -> str:
    """One review note per draft, whoever posts it: Memory keeps the first note under an id."""
    return uuid.uuid5(uuid.NAMESPACE_URL, f"seren-hippocampus:review-note:{draft_id}").hex


def draft_summary(ops: list) -> str:
    kinds = Counter(op["kind"] for op in ops)
    topics = sorted({op.get("topic") or "untagged" for op in ops})
    return (", ".join(f"{n} {k}" for k, n in sorted(kinds.items())) + " across " + ", ".join(topics))[:200]


def purge(ctx: Context) -> list:
    """Execute the flags Memory holds: the ids purged."""
    res = ctx.memory.purge_flagged()
    purged = [t.get("id") for t in res.get("purged", []) or [] if isinstance(t, dict)]
    restored = [r.get("id") for r in res.get("restored", []) or [] if isinstance(r, dict) and not r.get("error")]
    if purged:
        ctx.emit("purged", count=len(purged), ids=purged)
        log.info("purged %d flagged memory(ies): %s", len(purged), ", ".join(purged))
    if restored:
        ctx.emit("restored", count=len(restored), ids=restored)
    scrub.forget(ctx, purged)          # nor a copy in the replay packets
    return purged


def _post_review_note(ctx: Context, note_id: str, text: str) -> str:
    """The review note posted under its id; a note of other words there before it (Memory keeps the first posted
    under an id) is said, deleted and replaced: the main model reads the service's words about its draft."""
    for _ in range(2):
        ctx.memory.add_near(text, topic=REVIEW_TOPIC, note_id=note_id)
        kept = ctx.memory.memory(note_id)
        if kept is None or kept.get("content") == text:
            break
        log.warning("the near-term note %s in Memory held the review note's id with other words: replaced", note_id)
        ctx.memory.delete_near(note_id)
    return note_id


def finish_submit(ctx: Context, record: dict) -> None:
    """After the draft landed in Memory: the review note (one id: a restart never writes it twice; a note of that
    topic under another id is its writer's), the handover, draft_submitted (once). Idempotent."""
    cluster_id, draft_id = record["cluster_id"], record["draft_id"]
    note_id = (ctx.state.get("review_notes") or {}).get(cluster_id)
    if not note_id:
        try:
            note_id = _post_review_note(ctx, review_note_id(draft_id), (
                f"A draft with {record['operations']} operation(s) waits for your review: review_draft {draft_id}. "
                "Approve or deny each operation; a denial needs a critique."))
            ctx.state.mutate("review_notes", lambda n: {**n, cluster_id: note_id})
        except MemoryError_ as exc:
            log.warning("could not leave the review note for draft %s: %s", draft_id, exc)
    ctx.gate.handover()
    ctx.emit_once("draft_submitted", "draft_id", draft_id=draft_id, operations=record["operations"],
                  kinds=record.get("kinds", []), review_note_id=note_id, brief_id=record.get("brief_id"),
                  terminal=ctx.cfg.sleep.max_attempts <= 1)      # as it was submitted: its wake-up says so


def resume_submit(ctx: Context, snap) -> None:
    """A draft whose POST was under way when the service stopped: finish it, or forget it if it never landed."""
    record = ctx.state.get("submitting")
    if not record:
        return
    try:
        if not snap.has_draft(record["draft_id"]):
            ctx.memory.draft(record["draft_id"])
    except MemoryError_ as exc:
        if getattr(exc, "status", None) == 404:
            log.info("draft %s never reached Memory before the restart; its fragments wait for the next sleep",
                     record["draft_id"])
            ctx.state.set(submitting=None)
            return
        raise
    log.info("finishing draft %s, submitted before the restart", record["draft_id"])
    finish_submit(ctx, record)
    saved = {"brief_id": record.get("brief_id"), "catch_up": bool(record.get("catch_up")),
             "started_at": record.get("at"), "operations": record.get("operations", 0), **(record.get("sleep") or {})}
    record_sleep(ctx, SleepReport.from_dict(saved, draft_id=record["draft_id"], resumed=True, duration_seconds=None,
                                            tidy={"deferred": "until the chain lands"}, finished_at=ctx.clock.now()))


def resolve_brief_request(ctx: Context, brief: Optional[dict], pulled: bool) -> Optional[bool]:
    req = briefs.brief_wanted(ctx)
    if not req:
        return None
    answered = bool(brief) and not pulled
    if req.get("intent_id"):
        try:
            ctx.memory.delete_near(req["intent_id"])
        except MemoryError_ as exc:
            log.warning("could not delete the brief request note: %s", exc)
    claims.release_mine(ctx, claims.BRIEF_REQUEST)         # another copy may ask at the next bedtime
    ctx.state.set(brief_request={**req, "answered": answered, "resolved_at": ctx.clock.now()})
    return answered


# what a sleep's draft tells its chain's close (tend.close_chain): catch_up, the first sleep in a while (its landing
# keeps old fragments); keep_shorts, a promoted pile was passed over (its landing ages nothing out); keep_brief, the
# budget stopped the night (its landing leaves the brief open)
CHAIN_FLAGS = ("catch_up", "keep_shorts", "keep_brief")
HISTORY_KEYS = ("kind", "started_at", "finished_at", "duration_seconds", "error", "interrupted", "operations",
                "purged", "draft_id", "quiet", "catch_up", "brief_id", "cut_off", "clusters", "resumed", "other",
                "guard", "kept_back", "budget", "write")


def record_sleep(ctx: Context, report: SleepReport) -> None:
    """What a sleep records as it ends: sleep_done first (once), then one write of the report, the history and
    the rest, so killed between the two the restart finishes the sleep again and says nothing twice."""
    done = report.ok
    changes: dict = {"last_sleep": lambda _: report.to_dict(), "history": history_with(report.pick(HISTORY_KEYS)),
                     "gave_up": lambda _: None}      # a chain closed unwritable is said until the next sleep
    if done:
        fields = report.pick(("operations", "purged", "quiet", "catch_up", "brief_answered", "draft_id"))
        if report.tokens.get("timed"):          # what the model's server said the night cost, in tokens
            fields["tokens"] = report.tokens
        if report.budget:                       # the limit that stopped the night (/metrics counts it apart)
            fields["budget"] = report.budget.get("limit")
        if report.draft_id:
            ctx.emit_once("sleep_done", "draft_id", **fields)
        else:
            ctx.emit("sleep_done", **fields)
        changes["last_slept_at"] = lambda _: report.finished_at
        if report.draft_id or not report.budget:    # stopped by the budget before it drafted: not a success
            changes["last_sleep_ok_at"] = lambda _: report.finished_at
    record = ctx.state.get("submitting") if done and report.draft_id else None
    if record:
        changes["submitting"] = lambda _: None
        for flag in CHAIN_FLAGS:            # kept by cluster id until the chain's close reads them
            if record.get(flag):
                changes[f"chain_{flag}"] = lambda c: {**c, record["cluster_id"]: True}
    ctx.state.mutate_many(**changes)
    if done:
        claims.post_slept(ctx, report.finished_at, bedtime(ctx.cfg.sleep, ctx.state, ctx.clock.now()))
    outcomes.say_sleep(report)          # one line: what the sleep did, or why it failed


def run_sleep(ctx: Context, brief: Optional[dict], snap, pulled: bool = False,
              purged: Optional[list] = None, claim: Optional[claims.Claim] = None) -> SleepReport:
    """snap, purged: the tick's snapshot and purge. claim: this copy's claim on the brief, checked again before
    each model call and before the post."""
    now = ctx.clock.now()
    report = SleepReport(started_at=now, brief_id=(brief or {}).get("id"), brief_pulled=pulled,
                         catch_up=is_catch_up(ctx.cfg.sleep, last_slept(ctx.state, now), now))
    ctx.progress.update(what="sleeping", since=now, piles=0, piles_done=0)
    capture.begin(ctx)
    t0 = time.monotonic()
    stopped: Optional[ServiceStopping] = None
    try:
        with budget.metered(ctx, budget.Meter(ctx.cfg.sleep.budget, t0)):
            _sleep(ctx, brief, pulled, report, purged, snap, claim)
    except claims.Taken as exc:          # another copy has it now: this one posts nothing, the brief is theirs
        report.interrupted, report.other = f"{exc}, so this copy stopped and posted nothing", exc.other
        log.warning("the sleep stopped: %s", report.interrupted)
    except ServiceStopping as exc:       # not a failure: the brief stays open, nothing was posted
        stopped = exc
        report.interrupted = str(exc)
        log.warning("the sleep was interrupted: %s; its brief stays open for the next start", exc)
        ctx.emit("sleep_interrupted", why=str(exc), brief_id=report.brief_id)
    except Exception as exc:  # noqa: BLE001 - every failure is reported, the brief stays open
        report.error = transport_words.in_words(exc)
        report.retry_at = None if ctx.mechanical else ctx.gate.held_until(ctx.clock.now())
        if not isinstance(exc, (ModelUnavailable, MemoryUnavailable)):
            wait_after(ctx, report)
        nxt = max(report.retry_at or 0, report.next_try_at or 0)
        ctx.emit("sleep_failed", error=report.error, brief_id=report.brief_id,
                 **({"next_attempt_at": nxt} if nxt else {}))
    finally:
        ctx.progress.clear()
    report.finished_at = ctx.clock.now()
    report.duration_seconds = round(time.monotonic() - t0, 3)
    record_sleep(ctx, report)
    if stopped:
        raise stopped
    return report


def wait_after(ctx: Context, report: SleepReport) -> None:
    """A sleep that failed after the model was reached waits before the next try on its brief: a check interval
    (sleep.tick_seconds) after the first failure, twice as long after each one more in a row, up to
    FAILED_WAIT_MAX_SECONDS. A success or another brief starts the count again. (A model or a Memory that did not
    answer is not waited for here: the next check tries again once it answers, or the lifecycle holds a start.)"""
    last = ctx.state.get("last_sleep") or {}
    before = last.get("failures") if last.get("error") and last.get("brief_id") == report.brief_id else 0
    report.failures = max(whole(before) or 0, 0) + 1
    tick = ctx.cfg.sleep.tick_seconds
    wait = min(tick * 2 ** min(report.failures - 1, 30), max(tick, FAILED_WAIT_MAX_SECONDS))
    report.next_try_at = ctx.clock.now() + wait


def failed_wait(last: Optional[dict], brief_id: Optional[str]) -> Optional[float]:
    """Until when a check does not try `brief_id` again, as the last sleep failed on it (None: no wait)."""
    last = last or {}
    return sane_time(last.get("next_try_at")) if last.get("error") and last.get("brief_id") == brief_id else None


def _sleep(ctx: Context, brief: Optional[dict], pulled: bool, report: SleepReport, purged: Optional[list],
           snap, claim: Optional[claims.Claim] = None) -> None:
    cfg = ctx.cfg
    if purged is None:
        purged = purge(ctx)
    report.purged = len(purged)
    if report.catch_up:
        ctx.emit("catch_up", since=last_slept(ctx.state, ctx.clock.now()))
    report.brief_answered = resolve_brief_request(ctx, brief, pulled)
    held = snap.held_short_ids()
    shorts = ctx.memory.shorts(limit=cfg.sleep.max_entries_per_run)
    free = [s for s in shorts if s.get("id") not in held]
    report.held_back, report.quiet = len(shorts) - len(free), not free
    meta = (brief or {}).get("metadata") or {}
    promote = [str(h).lower() for h in meta.get("promote_hints") or []]
    noise = [str(h).lower() for h in meta.get("noise_hints") or []]
    slept_on = bool(brief) and brief["id"] in (ctx.state.get("brief_times") or {})    # a night before this one
    if brief:
        ctx.state.mutate("brief_times", lambda t: dict(list({**t, brief["id"]: meta.get("created_at")}.items())[-50:]))
    plan = plan_sleep(free, promote_hints=promote, noise_hints=noise,
                      min_evidence=cfg.sleep.promote_min_evidence, pile_max=cfg.sleep.pile_max)
    voice_block, voice_version = ctx.voice_block()
    ops, served = _draft_piles(ctx, plan, brief, pulled, voice_block, report, claim)
    _say_guard(ctx, report)
    if brief and not pulled and promote:
        report.hints = plan.hint_hits
        if not report.quiet and not plan.hint_hits.get("promote"):
            report.brief_unmatched = True
            ctx.emit("brief_unmatched", brief_id=brief["id"], hints=sorted(promote))
    ops = submittable(ctx, ops)
    report.operations = len(ops)
    report.kinds = dict(Counter(op["kind"] for op in ops))
    if ops:
        ctx.stopping.check("the sleep was drafted but not posted")
        if claim is not None:
            claim.check()
        extra = {**stamp(ctx, served, voice_version), **({"guard": report.guard} if report.guard else {})}
        submit_first_draft(ctx, ops, brief, report, extra, slept_on)
        report.tidy = {"deferred": "until the chain lands"}
        return
    _nothing_to_submit(ctx, brief, pulled, report, snap)


def _draft_piles(ctx: Context, plan, brief: Optional[dict], pulled: bool, voice_block: str,
                 report: SleepReport, claim: Optional[claims.Claim] = None) -> tuple:
    """(the operations of every pile, in order; the model's name as served)."""
    piles = whole_clusters(plan.piles) if ctx.mechanical else plan.piles
    report.clusters = len({p.cluster for p in plan.piles})
    report.piles = len(piles)
    report.below_threshold = plan.below_threshold
    ops, served = list(plan.verbatim_ops), None
    ctx.progress.update(piles=len(piles))
    if ctx.mechanical:
        for i, pile in enumerate(piles):
            extend_ops(ops, mechanical_ops(pile))
            ctx.progress.update(piles_done=i + 1)
        return ops, served
    steer_for = (lambda pile: Steer(summary=brief.get("content", ""), pulled=pulled, promote=list(pile.hits.promote),
                                    noise=list(pile.hits.noise))) if brief else (lambda pile: None)
    with contextlib.closing(parallel.drafted(ctx, piles, steer_for, voice_block, claim,
                                             ctx.cfg.model.parallel)) as results:
        for i, pile, res in results:        # in pile order, however many were drafted at once
            if isinstance(res, budget.BudgetSpent):     # the rest waits, kept, for the next night
                _budget_spent(ctx, report, res.spent, piles[i:])
                break
            report.model_calls += 1
            report.tokens = timings.add(report.tokens, res.timings)
            served = res.served or served
            report.cut_off += 1 if res.cut_off else 0
            if res.failure:
                report.model_failures.append({"stage": "draft", "topic": pile.topic, "why": res.failure[:300]})
                ctx.emit("draft_failed", topic=pile.topic, why=res.failure[:300])
            pile_ops, repeats = guard.drop_repeats(ops, res.operations)
            pile_tally = guard.tally(repeats, into=res.guard or None)
            report.guard = guard.merge(report.guard, pile_tally)
            report.write = grounded.tally(len(pile_ops) + sum(pile_tally["dropped"].values()), len(pile_ops),
                                          report.write, mode=res.write or "free", model=model_key(ctx))
            if pile.hits.promote and not pile_ops:
                report.kept_back.append(_kept_back(pile, res))
            extend_ops(ops, pile_ops)
            ctx.progress.update(piles_done=i + 1)
    return ops, served


def _budget_spent(ctx: Context, report: SleepReport, spent: budget.Spent, left: list) -> None:
    """The night stops drafting: what it drafted is submitted, the piles left keep their fragments and the brief
    stays open; the next sleep waits for the next bedtime (a sleep by hand need not)."""
    now = ctx.clock.now()
    report.budget = {**spent.to_dict(), **ctx.meter.to_dict(time.monotonic()),
                     "rest_until": bedtime_at(ctx.cfg.sleep, now, now),
                     "undrafted": [{"topic": p.topic, "fragments": len(p.entries)} for p in left]}
    words = outcomes.budget_words(report.budget, report.brief_id)       # the log says it as the sleep ends
    ctx.emit("sleep_budget_spent", limit=spent.limit, setting=spent.setting, words=words,
             piles_left=len(left), fragments=sum(len(p.entries) for p in left), brief_id=report.brief_id)


def _kept_back(pile, res) -> dict:
    """A pile the brief promoted that gave no operation: why, and its fragments, which no tidy ages out now."""
    why = ("the model's answer could not be used" if res.failure else
           "the guard dropped every operation the model proposed" if (res.guard or {}).get("dropped") else
           "the model proposed nothing")
    return {"topic": pile.topic, "hints": list(pile.hits.promote), "fragments": len(pile.entries),
            "ids": [e.get("id") for e in pile.entries], "why": why}


def _say_guard(ctx: Context, report: SleepReport) -> None:
    """The guard's drops and repairs, and the promoted piles kept back, as events and in the log."""
    say_dropped(ctx, log, report.guard, "anything", brief_id=report.brief_id)
    if report.kept_back:
        words = kept_back_words(report.kept_back)
        log.warning("%s", words)
        ctx.emit("kept_for_next_sleep", topics=[k["topic"] for k in report.kept_back],
                 fragments=sum(k["fragments"] for k in report.kept_back), words=words, brief_id=report.brief_id)


def kept_back_words(kept: list) -> str:
    piles = "; ".join(f"{k['fragments']} fragment(s) on '{k['topic'] or 'untagged'}' ({k['why']})" for k in kept)
    return f"kept for the next sleep, not aged out, because the brief promoted them: {piles}"


def _nothing_to_submit(ctx: Context, brief: Optional[dict], pulled: bool, report: SleepReport, snap) -> None:
    """A failure if the model could not draft; else the brief is consumed (or set aside) and the tidy runs. A
    night the budget stopped keeps its brief and ages nothing out."""
    if report.model_failures and not report.budget:
        whys = "; ".join(f"{f['topic'] or 'untagged'}: {f['why']}" for f in report.model_failures[:3])
        raise RuntimeError(f"the model could not draft: {whys}")
    if brief and not report.budget:        # a pulled one too: left open, the next check sleeps on it again
        if report.brief_unmatched:
            ctx.state.mutate("parked_briefs", lambda p: (p + [brief["id"]])[-50:])
            log.info("brief %s matched nothing and is set aside for a new one", brief["id"])
        else:
            briefs.retire_older(ctx, brief, snap)   # the older ones, then said, then consumed: killed between,
            ctx.emit_once("brief_consumed", "brief_id", brief_id=brief["id"], draft_id=None)   # it sleeps again
            ctx.memory.consume_brief(brief["id"], None)
    # a promoted pile passed over keeps its fragments, as does a night the budget stopped
    age_out = not (report.catch_up or report.kept_back or report.budget)
    try:        # the brief is consumed already: a tidy Memory did not do is the next sleep's, not a failed sleep
        report.tidy = ctx.memory.tidy(age_out=age_out, near=True, sweep=not report.catch_up, purge=False)
    except MemoryError_ as exc:
        report.tidy = {"error": str(exc)}
        log.warning("the sleep's tidy (age out, near-term, sweep) was not done; the next sleep does it: %s", exc)


def submit_first_draft(ctx: Context, ops: list, brief: Optional[dict], report: SleepReport, extra: dict,
                       slept_on: bool = True) -> None:
    draft_id = first_draft_id(ctx, (brief or {}).get("id"), slept_on)
    record = {"draft_id": draft_id, "cluster_id": draft_id, "brief_id": (brief or {}).get("id"),
              "operations": len(ops), "kinds": sorted({op["kind"] for op in ops}),
              "catch_up": report.catch_up, "at": ctx.clock.now(), "keep_shorts": bool(report.kept_back or report.budget),
              "keep_brief": bool(report.budget),
              "sleep": report.to_dict()}       # what a restart that finds the draft landed records
    ctx.state.set(submitting=record)
    body = {"id": draft_id, "summary": draft_summary(ops), "operations": ops,
            "brief_id_used": record["brief_id"], "attempt": 1,
            "terminal": ctx.cfg.sleep.max_attempts <= 1, "extra": extra}
    try:
        res = ctx.memory.submit_draft(body)
    except MemoryRefused:
        ctx.state.set(submitting=None)     # Memory said no: nothing landed
        raise
    except MemoryUnavailable:
        landed = landed_late(ctx, draft_id)
        if landed is False:
            ctx.state.set(submitting=None)
        if not landed:                     # unknown: the record stays for the next check
            raise
        res = {"id": draft_id}
    record["draft_id"] = res.get("id", draft_id)
    capture.seal(ctx, record["draft_id"], body)
    report.draft_id = record["draft_id"]
    finish_submit(ctx, record)
