"""Tend and cull. A cull is recorded step by step in the state file, its events said once before the record
drops them, so a crash repeats nothing and loses none."""
from __future__ import annotations

import logging
from typing import Optional

from hippocampus.cycle import claims, notes as note_rules, outcomes
from hippocampus.cycle.briefs import consume_superseded, written_before
from hippocampus.cycle.chains import Next, brief_of, ops_with
from hippocampus.cycle.context import Context
from hippocampus.cycle.redraft import redraft_chain
from hippocampus.drafting import guard
from hippocampus.cycle.reports import TendReport
from hippocampus.cycle.sleep import CHAIN_FLAGS, review_note_id
from hippocampus.cycle.snapshot import Snapshot, brief_created, time_of
from hippocampus.memory import MemoryError_, MemoryRefused, gone_ok
from hippocampus.words import whole

log = logging.getLogger(__name__)


# a redraft the model answered but that could not be used, this many times in a row: the chain is closed as a chain
# whose last attempt was denied (a model that cannot be reached does not count: the chain waits for it)
UNUSABLE_TRIES = 3
GAVE_UP = f"the small model could not write the redraft after {UNUSABLE_TRIES} tries"
UNUSABLE_NOTE_SECONDS = 7 * 86400.0      # a note no close deleted (its copy stopped mid-chain) expires after this
HISTORY_KEYS = ("kind", "started_at", "finished_at", "duration_seconds", "error", "interrupted", "resubmitted",
                "closed", "ended", "model_failures")       # a failed redraft is why its row is kept: its words


def record(ctx: Context, report: TendReport) -> None:
    """last_tend, since when redrafts wait, and a history row if it did something or failed."""
    waiting = ctx.state.get("redrafts_waiting_since")
    if report.deferred and not waiting:
        ctx.state.set(redrafts_waiting_since=report.started_at)
    elif not report.deferred and not report.error and not report.interrupted and waiting:
        ctx.state.set(redrafts_waiting_since=None)
    ctx.state.set(last_tend=report.to_dict())
    if report.error or report.interrupted or report.resubmitted or report.closed or report.model_failures:
        ctx.state.add_history(report.pick(HISTORY_KEYS))


def redraft(ctx: Context, step: Next, report: TendReport, snap: Snapshot) -> None:
    """Redraft a denied chain from its critique; with nothing left to redraft, close it."""
    report.redraft = True
    cid = step.cluster_id
    counted, noted = _noted_tries(ctx, step)
    tries = max(unusable_tries(ctx, cid), counted)
    if tries >= UNUSABLE_TRIES:            # counted before a restart cut the close short: not asked again
        close_chain(ctx, step, report, why=GAVE_UP, snap=snap)
        _drop_notes(ctx, noted)
        return
    resubmitted, withdrawn, failures, checked = redraft_chain(ctx, step)
    report.model_failures.extend(failures)
    report.guard = guard.merge(report.guard, checked)
    if withdrawn:
        report.withdrawn[step.cluster_id] = withdrawn
    if resubmitted:
        ctx.state.mutate("chain_unusable", lambda c: {k: v for k, v in c.items() if k != cid})    # usable: again
        _drop_notes(ctx, noted)
        report.resubmitted.append(resubmitted)
        log.info(outcomes.redraft_line(resubmitted, len(ops_with(step.latest, "denied")), withdrawn,
                                       ctx.cfg.sleep.max_attempts))
    elif failures:
        log.warning(outcomes.redraft_failed_line(step.cluster_id, failures))
        if any(f.get("answered") for f in failures):
            noted += _count_try(ctx, step, tries + 1, noted)
            if tries + 1 >= UNUSABLE_TRIES:
                log.warning("%s", gave_up_words(cid))
                close_chain(ctx, step, report, why=GAVE_UP, snap=snap)
                _drop_notes(ctx, noted)
    else:                                  # nothing left to redraft: close it
        why = "withdrawn" if withdrawn == len(ops_with(step.latest, "denied")) else "nothing to redraft"
        close_chain(ctx, step, report, why=why, snap=snap)
        _drop_notes(ctx, noted)


def _try_note_id(step: Next, n: int) -> str:
    """The id of the note in Memory that counts the n-th unusable redraft of this attempt of the chain."""
    return note_rules.unusable_id(step.cluster_id, len(step.attempts), n)


def _noted_tries(ctx: Context, step: Next) -> tuple:
    """(the tries counted, the ids of the notes to drop with the count) from the notes in Memory that count this
    attempt's unusable redrafts, by any copy of the service: copies on one Memory take turns on a chain, so each
    counts the others' tries too. Only well-formed notes count, each try once; a malformed one is said in the log
    (claims.malformed) and dropped with the count if it holds one of the count's ids. None to read for a copy alone
    on its Memory: its state counts them all."""
    if claims.alone(ctx):
        return 0, []
    near, now, attempt = ctx.memory.list_near(), ctx.clock.now(), len(step.attempts)
    tries = claims.well_formed(ctx, near, lambda n: note_rules.read_unusable(
        n, step.cluster_id, attempt, UNUSABLE_TRIES, now))
    ids = {_try_note_id(step, n) for n in range(1, UNUSABLE_TRIES + 1)}
    return len(set(tries)), list(dict.fromkeys(n["id"] for n in near if isinstance(n, dict) and n.get("id") in ids))


def _count_try(ctx: Context, step: Next, tries: int, noted: list) -> list:
    """Count one more unusable redraft: in the state, and (not alone) in a note in Memory; the note's id. A note
    already under that id (noted: a malformed one, as a well-formed one is counted) goes first: Memory keeps the
    first note posted under an id."""
    cid, note_id = step.cluster_id, _try_note_id(step, tries)
    ctx.state.mutate("chain_unusable", lambda c: {**c, cid: tries})
    if claims.alone(ctx):
        return []
    if note_id in noted:
        _drop_notes(ctx, [note_id])
    me = claims.me(ctx)
    note = ctx.memory.add_near(f"seren-hippocampus (pid {me['pid']} on {me['host']}) could not use the small "
                               f"model's redraft of chain {cid} ({tries} of {UNUSABLE_TRIES} tries in a row); "
                               "nothing to do about it", topic=note_rules.UNUSABLE_TOPIC,
                               expires_at=ctx.clock.now() + UNUSABLE_NOTE_SECONDS, trigger_type="event",
                               trigger_value="seren-hippocampus unusable redraft",
                               note_id=note_id, extra={**me, "cluster_id": cid, "attempt": len(step.attempts),
                                                       "tries": tries})
    return [note.get("id") or note_id]


def _drop_notes(ctx: Context, noted: list) -> None:
    """The notes of a count that starts again (a usable redraft) or is done with (the chain closed)."""
    for note_id in noted:
        with gone_ok():
            ctx.memory.delete_near(note_id)


def unusable_tries(ctx: Context, cid: str) -> int:
    """The chain's unusable redrafts in a row; a hand-edited count that is no whole number counts none, and is said."""
    kept = (ctx.state.get("chain_unusable") or {}).get(cid, 0)
    tries = whole(kept)
    if tries is None or tries < 0:
        log.warning("the state file's chain_unusable holds %r for chain %s where a count of tries belongs; it is "
                    "read as 0", kept, cid)
        return 0
    return tries


def gave_up_words(cid: str) -> str:
    """The log's line and /status's headline (until the next sleep) for a chain closed by UNUSABLE_TRIES."""
    return (f"Chain {cid} was closed: {GAVE_UP}, so its denied operations did not land. Check the model and its "
            "settings (model.url, model.max_tokens) before the next sleep.")


def close_chain(ctx: Context, step: Next, report: TendReport, why: Optional[str], snap: Snapshot) -> None:
    """Record the cull's plan in the state file, then carry it out."""
    cid, attempts = step.cluster_id, step.attempts
    denied_left = len(ops_with(step.latest, "denied"))
    if denied_left and cid not in (ctx.state.get("ended_chains") or []):
        fields = {"why": why} if why else {}
        ctx.emit_once("chain_ended", "cluster_id", cluster_id=cid, draft_id=step.latest.get("id"),
                      denied=denied_left, **fields)
        ctx.state.mutate("ended_chains", lambda e: (e + [cid])[-200:])
        report.ended.append(cid)
    record = {
        "cluster_id": cid, "drafts": [d["id"] for d in attempts if d.get("status") == "reviewed"],
        "closed": [], "brief_id": brief_of(attempts), "last_draft_id": attempts[-1]["id"], "consumed": False,
        "retired": False, "note_deleted": False, "attempts": len(attempts),
        "landed": sum(len(ops_with(d, "approved")) for d in attempts), "denied": denied_left,
        "verbatim": _denied_verbatim(attempts), "released": False, **({"why": why} if why == GAVE_UP else {}),
        **{flag: bool((ctx.state.get(f"chain_{flag}") or {}).get(cid, False)) for flag in CHAIN_FLAGS},
    }
    _save(ctx, record)
    finish_closing(ctx, cid, report, snap)


def _denied_verbatim(attempts: list) -> list:
    """The fragments of denied verbatim operations this chain never redrafts (a word-for-word mark is not
    rewritten) in attempts that were not terminal (a terminal denial Memory releases itself)."""
    return [sid for d in attempts if not d.get("terminal") for op in ops_with(d, "denied")
            if op.get("kind") == "verbatim" for sid in op.get("source_short_ids") or []]


def _save(ctx: Context, record: dict, done: Optional[str] = None) -> None:
    """Keep the cull's record, with its step `done` marked done."""
    if done:
        record[done] = True
    ctx.state.mutate("closing", lambda c: {**c, record["cluster_id"]: record})


def finish_closing(ctx: Context, cid: str, report: TendReport, snap: Snapshot) -> None:
    record = (ctx.state.get("closing") or {}).get(cid)
    if not record:
        return
    for did in (d for d in record["drafts"] if d not in record["closed"]):
        with gone_ok():
            ctx.memory.close_draft(did)
        record["closed"].append(did)
        _save(ctx, record)
    brief_id = record.get("brief_id")
    if brief_id and not record["consumed"] and not record.get("keep_brief"):
        try:
            ctx.memory.consume_brief(brief_id, record["last_draft_id"])
            ctx.emit_once("brief_consumed", "brief_id", brief_id=brief_id, draft_id=record["last_draft_id"])
        except MemoryRefused as exc:
            if exc.status != 404:
                raise
            log.warning("the brief %s that opened chain %s is gone from Memory", brief_id, cid)
        _save(ctx, record, "consumed")
    if brief_id and not record["retired"]:
        _retire_older_briefs(ctx, record, snap.briefs)
        _save(ctx, record, "retired")
    if not record["note_deleted"]:
        note_id = (ctx.state.get("review_notes") or {}).get(cid) or review_note_id(cid)   # or another copy's
        ctx.memory.delete_near(note_id)
        ctx.state.mutate("review_notes", lambda n: {k: v for k, v in n.items() if k != cid})
        _save(ctx, record, "note_deleted")
    if not record.get("released", True):
        for sid in record.get("verbatim") or []:     # the denial is final: or the mark proposes it every night
            try:
                ctx.memory.release_verbatim(sid)
            except MemoryRefused as exc:
                if exc.status not in (404, 409):        # gone, or no longer marked
                    raise
        _save(ctx, record, "released")
    try:
        # a pile the brief promoted and the sleep passed over keeps its fragments for the next sleep
        tidy = ctx.memory.tidy(age_out=not (record["catch_up"] or record.get("keep_shorts")), near=True,
                               sweep=not record["catch_up"], purge=False)
    except MemoryError_ as exc:
        tidy = {"error": str(exc)}
        log.warning("chain %s closed, but Memory's tidy (age out, near-term, sweep) was not done; the next close or "
                    "sleep does it: %s", cid, exc)
    report.tidy[cid] = tidy
    # said first, then the record dropped in one write: killed between, the restart finishes again, said once
    ctx.emit_once("chain_closed", "cluster_id", cluster_id=cid, draft_id=record["last_draft_id"],
                  brief_id=brief_id, attempts=record["attempts"], landed=record["landed"],
                  denied=record["denied"], aged_out=tidy.get("aged_out") if isinstance(tidy, dict) else None,
                  **({"why": record["why"]} if record.get("why") else {}))
    gave_up = {"gave_up": lambda _: {"cluster_id": cid, "draft_id": record["last_draft_id"], "why": record["why"],
                                     "at": ctx.clock.now(), "said": gave_up_words(cid)}} if record.get("why") else {}
    ctx.state.mutate_many(brief_misses=lambda _: 0, **gave_up, **dict.fromkeys(
        ["closing", "chain_unusable"] + [f"chain_{flag}" for flag in CHAIN_FLAGS],
        lambda c: {k: v for k, v in c.items() if k != cid}))
    report.closed.append(cid)
    log.info(outcomes.chain_closed_line(record))


def _retire_older_briefs(ctx: Context, record: dict, open_briefs: tuple) -> None:
    """Open briefs written before the one this chain used are answered by it: consume them too. Which ones is
    recorded first, so a restart that finds them consumed in Memory (no longer open) still says so, once."""
    used_id = record["brief_id"]
    if "retiring" not in record:
        used = next((b for b in open_briefs if b.get("id") == used_id), {})
        # or, slept on by another copy (this state never saw it), as the tick's snapshot read it open
        used_at = time_of((ctx.state.get("brief_times") or {}).get(used_id)) or brief_created(used)
        record["retiring"] = written_before(open_briefs, used_at, {used_id})
        _save(ctx, record)
    consume_superseded(ctx, record["retiring"], used_id)
