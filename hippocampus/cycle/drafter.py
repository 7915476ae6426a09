"""Drafting one pile with the small model: prompt, call, read the answer. ModelUnavailable escapes (the sleep
fails and keeps its brief); any other trouble is a model failure recorded against that pile."""
from __future__ import annotations

import functools
import logging
import time
import uuid
from dataclasses import dataclass, field
from typing import Callable, Optional

from hippocampus.config import redact
from hippocampus.cycle import budget, claims
from hippocampus.cycle.context import Context
from hippocampus.model import grounded, size
from hippocampus.memory import MemoryRefused, MemoryUnavailable, NotSerenMemory
from hippocampus.model.client import ModelFailure
from hippocampus.store import capture
from hippocampus.drafting import guard
from hippocampus.drafting.answer import cap_words, parse_answer
from hippocampus.drafting.candidates import find_candidates
from hippocampus.drafting.extractive import extract_cap, extract_format, parse_choices
from hippocampus.drafting.prompt import Steer, draft_prompt, extract_prompt, shown_date
from hippocampus.drafting.schema import answer_cap, response_format

log = logging.getLogger(__name__)


@dataclass
class PileResult:
    operations: list = field(default_factory=list)
    cut_off: bool = False
    failure: Optional[str] = None
    served: Optional[str] = None
    guard: dict = field(default_factory=dict)       # what the grounding guard dropped and repaired (guard.tally)
    write: Optional[str] = None                     # free or extractive: how this pile was drafted
    timings: Optional[dict] = None                  # the server's own token counts for the call (model.timings)


def call_model(ctx: Context, prompt: str, answer_format: Optional[dict] = None, max_tokens: Optional[int] = None):
    """One model call through the gate (which starts the model and hears how long it was used), counted against
    the night's budget when one is metered (budget.BudgetSpent before a call it does not allow); max_tokens: the
    answer's cap sized to its pile (None: model.max_tokens)."""
    ctx.stopping.check(STOPPED_MID_CALL)
    meter = ctx.meter
    if meter is not None:
        meter.check(time.monotonic())       # books the call (piles drafted at once count it in flight)
    try:
        ctx.gate.ensure()
        ctx.stopping.check(STOPPED_MID_CALL)
    except BaseException:
        if meter is not None:
            meter.unbook()
        raise
    started = time.monotonic()
    answer = None
    try:
        answer = ctx.model.chat(prompt, max_tokens=max_tokens, response_format=answer_format)
        return answer
    finally:
        ctx.gate.release(time.monotonic() - started)
        if meter is not None:
            meter.count(budget.answer_tokens(answer) if answer else 0, budget.was_cut(answer))


STOPPED_MID_CALL = "the model call was abandoned and nothing was posted"


def write_mode(ctx: Context) -> str:
    """model.write as this call drafts: free or extractive (auto: by the model's size, read once it is up, or by
    its measured grounding rate in the sleeps' history: hippocampus.model.grounded)."""
    setting, model = ctx.cfg.model.write, ctx.cfg.model
    if setting == "auto" and model.lifecycle.managed and ctx.model.learned.chosen is None:
        ctx.stopping.check(STOPPED_MID_CALL)
        ctx.gate.ensure()           # a managed model is started here, so that its size can be read
        ctx.gate.release(0.0)       # (one this service does not start answers, or not, on its own)
    pick = size.mode_for(setting, model.url, ctx.model.learned, seconds=min(size.TIMEOUT, model.timeout_seconds))
    if setting == "auto":
        pick = grounded.by_rate(pick, grounded.measure(ctx.state.get("history") or [], model_key(ctx)))
    return pick["mode"]


def model_key(ctx: Context) -> str:
    """The model a night's grounding is measured for: model.name and its URL, without credentials."""
    return grounded.model_key(ctx.cfg.model.name, redact.url(ctx.cfg.model.url))


def draft_pile(ctx: Context, pile, steer: Optional[Steer], voice_block: str) -> PileResult:
    texts = [e.get("content", "") for e in pile.entries]
    candidates = find_candidates(ctx.memory, texts, ctx.cfg.sleep.candidate_cores)
    extractive = write_mode(ctx) == size.EXTRACTIVE
    prompt, markers = (extract_prompt if extractive else draft_prompt)(
        voice_block=voice_block, steer=steer, topic=pile.topic, entries=pile.entries, candidates=candidates,
        core_chars=ctx.cfg.sleep.core_chars)
    ceiling = ctx.cfg.model.max_tokens
    max_tokens = extract_cap(markers, ceiling) if extractive else answer_cap(markers, ceiling)   # sized to the pile
    written = {"write": size.EXTRACTIVE} if extractive else {}      # a replay reads its answer as choices
    fmt = extract_format(markers, max_tokens) if extractive else response_format(markers, max_tokens)
    parse = functools.partial(parse_choices if extractive else parse_answer, ceiling=ceiling)
    try:
        answer, parsed = ask(ctx, "draft", pile.topic, prompt, markers, candidates, fmt, max_tokens, parse, written)
    except ModelFailure as exc:
        return PileResult(failure=str(exc), write=size.EXTRACTIVE if extractive else size.FREE)
    for op in parsed.operations:
        op["topic"] = op.get("topic") or pile.topic
    checked = guard.check(parsed.operations, pile_sources(pile.entries, candidates),
                          max_tokens=ctx.cfg.model.max_tokens)
    tally = guard.tally(guard.reader_findings(parsed.dropped, pile.topic) + checked.dropped, checked.repaired)
    capture.record(ctx, "draft", pile.topic, prompt, markers, candidates, answer=answer, parsed=parsed,
                   guard=tally, **written)
    if parsed.cut_off and parsed.operations:
        log.warning("an answer on '%s' ran into %s; kept the %d operation(s) it finished",
                    pile.topic or "untagged", cap_words(max_tokens, ceiling), len(parsed.operations))
    for why in parsed.dropped:
        log.info("dropped an operation on '%s': %s", pile.topic or "untagged", why)
    log_findings(pile.topic, checked)
    return PileResult(operations=checked.operations, cut_off=parsed.cut_off, failure=parsed.failure,
                      served=answer.served, guard=tally, write=size.EXTRACTIVE if extractive else size.FREE,
                      timings=answer.timings)


def ask(ctx: Context, stage: str, topic: Optional[str], prompt: str, markers, candidates: list, fmt: dict, cap: int,
        parse: Callable, shown: dict) -> tuple:
    """(the model's answer, parse's reading of it) for a draft's or a redraft's prompt; a failed call is recorded
    for a replay and raised (ModelFailure). parse(text, ...) is given the answer's finish_reason, the markers, the
    cap, whether the answer was held to its schema and, for an answer of choices (shown["write"] extractive), the
    shown cores' texts by marker."""
    try:
        answer = call_model(ctx, prompt, fmt, cap)
    except ModelFailure as exc:
        capture.record(ctx, stage, topic, prompt, markers, candidates, error=str(exc), response_format=fmt, **shown)
        raise
    read = {"finish_reason": answer.finish_reason, "markers": markers, "max_tokens": cap,
            "constrained": answer.response_format is not None}
    if shown.get("write") == size.EXTRACTIVE:
        by_id = {c.get("id"): c.get("content") for c in candidates if isinstance(c, dict)}
        read["core_texts"] = {m: by_id.get(cid) or "" for m, cid in markers.cores.items()}
    return answer, parse(answer.text, **read)


def pile_sources(entries: list, candidates: list, extra: tuple = ()) -> guard.Sources:
    """What a pile's operations may draw on: each fragment with the date shown beside it, the cores shown."""
    frags = {}
    for e in entries:
        if isinstance(e, dict) and e.get("id"):
            meta = e.get("metadata") if isinstance(e.get("metadata"), dict) else {}
            frags[e["id"]] = f"{e.get('content') or ''} ({shown_date(meta.get('ts')) or ''})"
    cores = {c.get("id"): str(c.get("content") or "") for c in candidates or [] if isinstance(c, dict)}
    return guard.Sources(frags, cores, tuple(t for t in extra if t))


def log_findings(topic: Optional[str], checked: guard.Guarded) -> None:
    for did, found, rules in (("dropped", checked.dropped, guard.RULES), ("repaired", checked.repaired, guard.REPAIRS)):
        for f in found:
            log.info("the guard %s an operation on '%s' (%s: %s): %r", did, topic or "untagged",
                     rules.get(f.rule, f.rule), f.detail, f.content)


def say_dropped(ctx: Context, logger: logging.Logger, tally: dict, before: str, **fields) -> None:
    """The guard's drops and repairs (a tally, {} for none) before `before` is sent: in the caller's log and as
    an event."""
    if tally:
        words = guard.sentence(tally)
        logger.warning("the grounding guard, before %s is sent: %s", before, words)
        ctx.emit("operations_dropped", dropped=sum(tally.get("dropped", {}).values()),
                 repaired=sum(tally.get("repaired", {}).values()), reasons=tally.get("dropped"), words=words, **fields)


def extend_ops(ops: list, more: list) -> None:
    """Append `more` to `ops`, its target_op indexes shifted to count from the start of `ops`."""
    for op in more:
        if op.get("target_op") is not None:
            op["target_op"] += len(ops)
    ops.extend(more)


def submittable(ctx: Context, ops: list) -> list:
    """Leave out what this Memory cannot take: target_op (and redraft_of) only where /health lists them. No
    target_op is left to re-point: with one left out, every one is."""
    if all(op.get("target_op") is None and op.get("redraft_of") is None for op in ops):
        return ops
    try:
        features = ctx.memory.features()
    except Exception:  # noqa: BLE001 - no answer counts as "not listed"
        features = set()
    out = []
    for op in ops:
        if op.get("target_op") is not None and "target_op" not in features:
            log.warning("Memory does not take target_op (an older build); left out an operation on '%s'",
                        op.get("topic"))
            continue
        if op.get("redraft_of") is not None and "redraft_of" not in features:
            op = {k: v for k, v in op.items() if k != "redraft_of"}
        out.append(op)
    return out


def landed_late(ctx: Context, draft_id: str) -> Optional[bool]:
    """Did a POST that errored land anyway (a timeout after Memory wrote it)? None: cannot tell yet."""
    try:
        ctx.memory.draft(draft_id)
        return True
    except MemoryRefused:
        return False
    except MemoryUnavailable:
        return None


def step_draft_id(key: Optional[str], attempt: int) -> str:
    """The id of one step of a chain, from its brief or its chain (no brief: a fresh id), so a POST sent again
    after one that landed late is the same draft, which Memory keeps once."""
    if not key:
        return uuid.uuid4().hex
    return uuid.uuid5(uuid.NAMESPACE_URL, f"seren-hippocampus:draft:{key}:{int(attempt)}").hex


NIGHTS = 366         # a brief opens chains on at most this many nights (a budget keeps it open); more: not SerenMemory


def first_draft_id(ctx: Context, brief_id: Optional[str], slept_on: bool = True) -> str:
    """The id of the first draft of a sleep on this brief (no brief: a fresh id). A brief a budget kept open past
    its chain's landing opens the next chain: its first draft (closed now) holds the brief's id, so the next night
    takes the next one (Memory keeps the first draft posted under an id: the night's own would be lost). A copy
    alone on its Memory that never `slept_on` the brief takes the first id without asking Memory."""
    if not slept_on and claims.alone(ctx):
        return step_draft_id(brief_id, 1)
    for night in range(NIGHTS):
        draft_id = step_draft_id(f"{brief_id}:{night}" if brief_id and night else brief_id, 1)
        try:
            if not brief_id or ctx.memory.draft(draft_id).get("status") != "closed":
                return draft_id
        except MemoryRefused as exc:
            if exc.status != 404:
                raise
            return draft_id
    raise NotSerenMemory(ctx.memory.url, "GET", f"/drafts/{draft_id}", 200,
                         f"the first drafts of brief {brief_id} on {NIGHTS} nights all closed")


def stamp(ctx: Context, served: Optional[str], voice_version: Optional[int]) -> dict:
    """The draft's `extra`: how it was written, and by which copy of the service (claims.drafted_by reads it)."""
    if ctx.mechanical:
        return {"model_mode": "mechanical", "model_prompt": PROMPT_VERSION, **claims.stamp(ctx)}
    return {"model_mode": "model", "model_name": ctx.cfg.model.name, "model_served": served or ctx.cfg.model.name,
            "model_url": redact.url(ctx.cfg.model.url), "model_prompt": PROMPT_VERSION,
            **({"model_voice": voice_version} if voice_version else {}), **claims.stamp(ctx)}


PROMPT_VERSION = "2026-11-30"
