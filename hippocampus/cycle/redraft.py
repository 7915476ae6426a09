"""Redrafting denied operations: a redraft answers each denied operation's critique with operations naming the
one they replace (redraft_of), never rewording a core."""
from __future__ import annotations

import functools
import logging
import time
from typing import Optional

from hippocampus.cycle import budget
from hippocampus.cycle.chains import Next, chain_cores, ops_with
from hippocampus.cycle.context import Context
from hippocampus.cycle.drafter import ask, extend_ops, landed_late, log_findings, pile_sources, say_dropped, \
    stamp, step_draft_id, submittable, write_mode
from hippocampus.drafting import guard, rechoose
from hippocampus.drafting.answer import parse_answer
from hippocampus.drafting.candidates import find_candidates
from hippocampus.drafting.prompt import redraft_prompt
from hippocampus.drafting.schema import answer_cap, response_format
from hippocampus.memory import MemoryRefused, MemoryUnavailable
from hippocampus.model import size
from hippocampus.model.client import ModelFailure
from hippocampus.store import capture

log = logging.getLogger(__name__)
VERBATIM = "marked to be kept word for word: the person's call, never redrafted"     # why it leaves the chain


class Unreadable(str):
    """A redraft's failure where the model answered, but with nothing usable (tend counts these in a row)."""


def earlier_versions(attempts: list, latest: dict, op: dict) -> list:
    """Every earlier version of this operation, oldest first, by following redraft_of back."""
    out = []
    by_attempt = {int(d.get("attempt") or 1): d for d in attempts}
    cur_attempt, cur_op = int(latest.get("attempt") or 1), op
    while cur_op.get("redraft_of") is not None:
        prev = by_attempt.get(cur_attempt - 1)
        ops = (prev or {}).get("operations") or []
        idx = cur_op["redraft_of"]
        if prev is None or not (0 <= idx < len(ops)):
            break
        cur_attempt, cur_op = cur_attempt - 1, ops[idx]
        out.append({"attempt": cur_attempt, "kind": cur_op.get("kind"), "content": cur_op.get("content"),
                    "critique": cur_op.get("critique")})
    return list(reversed(out))


def _row(ctx: Context, memory_id: str, tier: str) -> Optional[dict]:
    """The memory if Memory has it in this tier; None when Memory says it is not there (gone, or refused). A
    Memory that did not answer raises: a fragment it did not show is not a fragment an approval took."""
    try:
        row = ctx.memory.memory(memory_id)
    except MemoryRefused:          # a Memory that did not answer (MemoryUnavailable) raises
        return None
    return row if row and row.get("tier") == tier else None


def _core(ctx: Context, core_id: str, read: dict) -> Optional[dict]:
    """The core as the model is shown it, with its satellites, if Memory still has it as a live core: one
    superseded since may be a satellite now (Memory refuses a draft that attaches to one), or replaced; one
    flagged for forget is purged before an attach to it could land. `read` holds the cores this redraft has read
    already: each is read once."""
    if core_id not in read:
        try:
            got = ctx.memory.satellites(core_id) or {}
        except MemoryRefused:          # a Memory that did not answer (MemoryUnavailable) raises
            got = {}
        row = got.get("core") or {}
        meta = row.get("metadata") or {}
        live = row.get("tier") == "long" and meta.get("kind", "core") == "core" \
            and not (meta.get("superseded_by") or meta.get("forget_flag"))
        read[core_id] = {"id": core_id, "content": row.get("content", ""), "topic": meta.get("topic"),
                         "satellites": int(got.get("count") or 0)} if live else None
    return read[core_id]


def _target_id(draft: dict, op: dict) -> Optional[str]:
    if op.get("target_core_id"):
        return op["target_core_id"]
    t = op.get("target_op")
    ops = draft.get("operations") or []
    if t is not None and 0 <= t < len(ops) and ops[t].get("status") == "approved":
        return ops[t].get("long_term_id")
    return None


def _candidates(ctx: Context, step: Next, op: dict, entries: list, read: dict) -> tuple:
    """(the cores shown to the model, the denied operation's target if Memory still has it: a purged core
    shown as a target would be attached to again, and Memory refuses a draft naming it)."""
    seen: dict = {}
    for cid in chain_cores(step.attempts):
        core = _core(ctx, cid, read)      # a core this chain made may have been forgotten or superseded since
        if core:
            seen.setdefault(cid, core)
    texts = [e["content"] for e in entries] + [op.get("content") or ""]
    for c in find_candidates(ctx.memory, texts, ctx.cfg.sleep.candidate_cores):
        seen.setdefault(c["id"], c)
    target = _target_id(step.latest, op)
    core = _core(ctx, target, read) if target and target not in seen else None
    if core:
        seen[target] = core
    return list(seen.values()), target if target in seen else None


def _fragments(ctx: Context, op: dict) -> list:
    """The denied operation's fragments still in short-term (an approval of a sibling may have archived some)."""
    rows = [(sid, _row(ctx, sid, "short")) for sid in op.get("source_short_ids") or []]
    return [{"id": row.get("id", sid), "content": row.get("content", ""), "metadata": row.get("metadata") or {}}
            for sid, row in rows if row]


def redraft_op(ctx: Context, step: Next, op: dict, voice_block: str, read: dict) -> tuple:
    """(new operations, withdrawn? (or why, when not the model's or the guard's doing), failure or None, the
    guard's tally) for one denied operation. The guard checks a redraft as it checks a draft; its sources add
    the critique and the denied version. `read`: the cores this redraft has read from Memory."""
    # all of its material or none: a redraft from a fragment short would leave that one behind; a Memory that
    # does not answer (MemoryUnavailable) fails the tend, which says so, and the chain waits (not the model's doing)
    entries = _fragments(ctx, op)
    if op.get("kind") == "verbatim" and any(e["metadata"].get("verbatim") for e in entries):
        return [], VERBATIM, None, {}      # word for word was the person's call: not redrafted
    candidates, target = _candidates(ctx, step, op, entries, read)
    shown_op = dict(op, target_core_id=target)
    extractive = write_mode(ctx) == size.EXTRACTIVE     # chosen, not written: the fragments' or the critique's words
    prompt, markers = (rechoose.prompt if extractive else redraft_prompt)(
        voice_block=voice_block, critique=op.get("critique") or "", op=shown_op,
        earlier=earlier_versions(step.attempts, step.latest, op), entries=entries, candidates=candidates,
        core_chars=ctx.cfg.sleep.core_chars)
    shown = {"redraft_of": op.get("index"), "critique": op.get("critique") or "", "denied": shown_op,
             **({"write": size.EXTRACTIVE, "said": markers.said} if extractive else {})}   # a replay reads it alike
    ceiling = ctx.cfg.model.max_tokens
    cap = ceiling if extractive else answer_cap(markers, ceiling, redraft=True)   # sized to what the redraft holds
    fmt = rechoose.response_format(markers, cap) if extractive else response_format(markers, cap, redraft=True)
    parse = functools.partial(rechoose.parse if extractive else parse_answer, redraft_of=op.get("index"),
                              **({} if extractive else {"ceiling": ceiling}))
    try:
        answer, parsed = ask(ctx, "redraft", op.get("topic"), prompt, markers, candidates, fmt, cap, parse, shown)
    except ModelFailure as exc:
        return [], False, str(exc), {}
    if parsed.failure:
        capture.record(ctx, "redraft", op.get("topic"), prompt, markers, candidates, answer=answer, parsed=parsed,
                       **shown)
        return [], False, Unreadable(parsed.failure), {}
    for new in parsed.operations:
        new.pop("restated_content", None)
        if not new.get("source_short_ids"):   # a sibling's approval archived them: keep the old sources
            new["source_short_ids"] = list(op.get("source_short_ids") or [])
            new["evidence_count"] = max(1, len(new["source_short_ids"]))
        new["topic"] = new.get("topic") or op.get("topic")
        new["redraft_of"] = op.get("index")
    sources = pile_sources(entries, candidates, extra=(op.get("critique") or "", op.get("content") or ""))
    for sid in op.get("source_short_ids") or []:        # its own fragments, even those an approval took
        sources.fragments.setdefault(sid, "")
    checked = guard.check(parsed.operations, sources, max_tokens=ctx.cfg.model.max_tokens)
    tally = guard.tally(guard.reader_findings(parsed.dropped, op.get("topic")) + checked.dropped, checked.repaired)
    capture.record(ctx, "redraft", op.get("topic"), prompt, markers, candidates, answer=answer, parsed=parsed,
                   guard=tally, **shown)
    log_findings(op.get("topic"), checked)
    return checked.operations, not checked.operations, None, tally


def _why_withdrawn(tally: dict, repeats: list) -> str:
    """Why a denied operation left the chain, as the draft says it: the guard's rules and their details ("restates_core:
    core 1a2b3c4d5e6f", "duplicate: of op 0 of the draft"), or the model's own withdrawal."""
    found = [f"{e['rule']}: {e['detail']}" for e in (tally or {}).get("examples") or []
             if e.get("outcome") == "dropped"]
    found += [f"{f.rule}: {f.detail}" for f in repeats]
    return "; ".join(found) or "withdrawn by the model"


def _withdrawals(why: dict) -> dict:
    """The denied operations the redraft withdrew leave the chain here, said (and why) on the draft that drops them."""
    return {"withdrawn_ops": list(why), "withdrawn_why": {str(i): w for i, w in why.items()}} if why else {}


def _budget_spent(ctx: Context, op: dict, latest: dict, exc: budget.BudgetSpent) -> dict:
    ctx.emit("redraft_failed", topic=op.get("topic"), op=op.get("index"), why=str(exc), draft_id=latest["id"],
             setting=exc.spent.setting)
    return {"stage": "redraft", "topic": op.get("topic"), "op": op.get("index"), "why": f"stopped early: {exc}",
            "budget": exc.spent.to_dict()}


def redraft_chain(ctx: Context, step: Next) -> tuple:
    """(the resubmitted attempt or None, how many operations were withdrawn, the model's failures, the guard's
    tally). A denied operation whose every redraft the guard dropped is withdrawn, and the draft says why."""
    if ctx.mechanical:
        log.info("chain %s has denied operations but no model is configured to redraft them", step.cluster_id)
        return None, 0, [], {}
    latest, failures, ops, checked, why, read = step.latest, [], [], {}, {}, {}     # why: each withdrawn op's reason
    voice_block, voice_version = ctx.voice_block()
    capture.begin(ctx)
    ctx.progress.update(what="redrafting", since=ctx.clock.now())
    meter = budget.Meter(ctx.cfg.sleep.budget, time.monotonic())       # one chain step's redraft, on its own
    try:
        for op in ops_with(latest, "denied"):
            try:
                with budget.metered(ctx, meter):
                    new_ops, gone, failure, tally = redraft_op(ctx, step, op, voice_block, read)
            except budget.BudgetSpent as exc:        # all or nothing: the tend's line says why
                failures.append(_budget_spent(ctx, op, latest, exc))
                break
            new_ops, repeats = guard.drop_repeats(ops, new_ops, fold=True)    # a twin's fragments land with it
            checked = guard.merge(checked, guard.tally(repeats, into=tally or None))
            gone = gone or (not failure and not new_ops)
            if failure:
                failures.append({"stage": "redraft", "topic": op.get("topic"), "op": op.get("index"),
                                 "why": failure[:300], **({"answered": True} if isinstance(failure, Unreadable)
                                                          else {})})
                ctx.emit("redraft_failed", topic=op.get("topic"), op=op.get("index"), why=failure[:300],
                         draft_id=latest["id"])
            elif gone:
                why[op.get("index")] = said = gone if isinstance(gone, str) else _why_withdrawn(tally, repeats)
                log.info("op %s of draft %s was withdrawn by the redraft (%s)", op.get("index"), latest["id"], said)
            extend_ops(ops, new_ops)
    finally:
        ctx.progress.clear()
    say_dropped(ctx, log, checked, f"the redraft of {latest['id']}", draft_id=latest["id"], stage="redraft")
    ops = [] if failures else submittable(ctx, ops)     # all or nothing: a part submitted would drop the rest for good
    if not ops:
        return None, len(why), failures, checked
    attempt = int(latest.get("attempt") or 1) + 1
    terminal = attempt >= ctx.cfg.sleep.max_attempts
    body = {"id": step_draft_id(step.cluster_id, attempt), "summary": f"redraft of {latest['id']} (attempt {attempt})",
            "operations": ops, "cluster_id": step.cluster_id, "attempt": attempt, "terminal": terminal,
            "previous_draft_ids": list(latest.get("previous_draft_ids") or []) + [latest["id"]],
            "brief_id_used": latest.get("brief_id_used"),
            "extra": {**stamp(ctx, None, voice_version), **_withdrawals(why),
                      **({"guard": checked} if checked else {})}}
    try:
        draft_id = ctx.memory.submit_draft(body).get("id") or body["id"]
    except MemoryUnavailable:           # written, then not answered in time? then it is resubmitted: said below
        if not landed_late(ctx, body["id"]):
            raise
        draft_id = body["id"]
    capture.seal(ctx, draft_id, body)
    ctx.gate.handover()
    ctx.emit("tend_resubmitted", draft_id=draft_id, cluster_id=step.cluster_id, attempt=attempt,
             operations=len(ops), terminal=terminal)
    return {"draft_id": draft_id, "cluster_id": step.cluster_id, "attempt": attempt, "operations": len(ops),
            "terminal": terminal}, len(why), failures, checked
