"""One read of Memory per tick: the live drafts grouped into chains, and the open briefs."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from hippocampus.cycle import copies
from hippocampus.cycle.bedtime import bedtime
from hippocampus.cycle.chains import CLOSE, REDRAFT, REVIEW, Next, brief_of, ops_with, plan

BRIEF_READ_LIMIT = 50


@dataclass(frozen=True)
class Snapshot:
    at: float
    drafts: tuple = ()                    # pending and reviewed drafts, as Memory returned them
    briefs: tuple = ()                    # open briefs, newest first
    parked: frozenset = frozenset()       # briefs set aside (matched nothing); from the state
    brief_times: tuple = ()               # (brief id, created_at) of briefs slept on; from the state
    closing_briefs: frozenset = frozenset()   # briefs of culls the state file records in flight
    chains: tuple = field(default=(), compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "chains", tuple(plan(list(self.drafts))))

    @property
    def open_chain(self) -> Optional[Next]:
        """One chain at a time: a chain under review or due a redraft holds the next sleep (one that landed not)."""
        return next((c for c in self.chains if c.action in (REVIEW, REDRAFT)), None)

    @property
    def chain_open(self) -> bool:
        return self.open_chain is not None

    def chains_to(self, action: str) -> list:
        """The chains whose next step is `action`: under review (REVIEW), a redraft due (REDRAFT), landed (CLOSE)."""
        return [c for c in self.chains if c.action == action]

    @property
    def briefs_in_chains(self) -> set:
        """The briefs that opened a live chain or one whose cull is in flight: never slept on a second time."""
        live = {d.get("brief_id_used") for c in self.chains for d in c.attempts if d.get("brief_id_used")}
        return live | set(self.closing_briefs)

    @property
    def brief(self) -> Optional[dict]:
        """The newest open brief that is neither parked, nor a live chain's, nor older than that one (a chain
        that lands consumes the briefs written before its own)."""
        used = self.briefs_in_chains
        times = {**dict(self.brief_times), **{b.get("id"): brief_created(b) for b in self.briefs}}
        cutoff = max((times[i] for i in used if times.get(i) is not None), default=None)
        skip = self.parked | used
        return next((b for b in self.briefs if b.get("id") not in skip
                     and (cutoff is None or brief_created(b) is None or brief_created(b) >= cutoff)), None)

    def held_short_ids(self) -> set:
        """Short-terms a pending operation of a pending draft cites: a sleep leaves them alone."""
        return {sid for d in self.drafts if d.get("status") == "pending" for op in d.get("operations", [])
                if op.get("status", "pending") == "pending" for sid in op.get("source_short_ids") or []}

    def has_draft(self, draft_id: str) -> bool:
        return any(d.get("id") == draft_id for d in self.drafts)

    def summary(self) -> dict:
        """What /status and the viewer show of it."""
        review, open_chain = self.chains_to(REVIEW), self.open_chain
        waiting = review[0].latest if review else None
        return {"at": self.at, "chain_open": self.chain_open, "chains": len(self.chains),
                "chain_brief_id": None if open_chain is None else brief_of(open_chain.attempts),
                "under_review": len(review), "redrafts_due": len(self.chains_to(REDRAFT)),
                "landed": len(self.chains_to(CLOSE)), "open_briefs": len(self.briefs),
                "brief_id": (self.brief or {}).get("id"),
                "waiting_draft": None if waiting is None else {
                    "id": waiting.get("id"), "operations": len(waiting.get("operations") or []),
                    "pending": len(ops_with(waiting, "pending")),
                    "attempt": waiting.get("attempt"), "created_at": waiting.get("created_at")}}


def time_of(at) -> Optional[float]:
    """A brief's time as Memory or the state holds it, as a number; None for none or one that is no number."""
    try:
        return None if at is None else float(at)
    except (TypeError, ValueError):
        return None


def brief_created(brief: dict) -> Optional[float]:
    """When the brief was written (its created_at), as a number; None for none or one that is no number."""
    return time_of((brief.get("metadata") or {}).get("created_at"))


def read_for(ctx, briefs: Optional[tuple] = None) -> Snapshot:
    """The tick's snapshot (pending drafts, reviewed drafts, open briefs), kept on the context as the last one
    seen (for /status and MCP). When there is work (bedtime has come, or a chain is due a step) the near-term
    notes are read once too: whether another copy runs on this Memory (cycle/copies.py), and another copy's newer
    sleep (it can only move a bedtime that has come), kept in the state for bedtime. An idle tick reads no more.
    briefs: the open briefs, when the caller knows they are the last snapshot's (after a step that changed only the
    drafts)."""
    picked = ctx.state.pick("parked_briefs", "brief_times", "closing", "submitting")
    now = ctx.clock.now()
    drafts = ctx.memory.drafts("pending") + ctx.memory.drafts("reviewed")
    briefs = ctx.memory.open_briefs(limit=BRIEF_READ_LIMIT) if briefs is None else list(briefs)
    near = None
    due = now >= bedtime(ctx.cfg.sleep, ctx.state, now)
    if due or picked["closing"] or picked["submitting"] or any(c.action in (CLOSE, REDRAFT) for c in plan(drafts)):
        if not ctx.copies_announced:
            copies.announce(ctx)            # posted before the read, so two copies starting together meet
        near = ctx.memory.list_near()
        if ctx.copies_announced:        # posted again if its note is gone or past half its week (runs for weeks)
            copies.announce(ctx, near)
    copies.seen(ctx, near, drafts)
    if due and near is not None:
        copies.heard_slept(ctx, near)
    times = tuple((k, at) for k, v in (picked["brief_times"] or {}).items() if (at := time_of(v)) is not None)
    taken = frozenset(r["brief_id"] for r in (picked["closing"] or {}).values()
                      if isinstance(r, dict) and r.get("brief_id"))
    ctx.last_snapshot = Snapshot(at=now, drafts=tuple(drafts), briefs=tuple(briefs), brief_times=times,
                                 parked=frozenset(picked["parked_briefs"] or ()), closing_briefs=taken)
    return ctx.last_snapshot
