"""What a chain needs next, from the drafts Memory holds. Pure functions.

A chain is the drafts sharing a cluster_id, ordered by attempt. Its latest
attempt decides: pending means under review; reviewed with denied operations,
not terminal, means a redraft is due; reviewed with nothing denied, or
terminal, means it is done and is culled (closed, brief consumed).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

REVIEW, REDRAFT, CLOSE = "under_review", "redraft", "close"


def cluster_of(draft: dict) -> str:
    return draft.get("cluster_id") or draft["id"]


def group_chains(drafts: list) -> dict:
    chains: dict = {}
    seen = set()
    for d in drafts:
        if d.get("id") in seen:
            continue
        seen.add(d.get("id"))
        chains.setdefault(cluster_of(d), []).append(d)
    for attempts in chains.values():
        attempts.sort(key=lambda d: (int(d.get("attempt") or 1), float(d.get("created_at") or 0)))
    return chains


def denied_ops(draft: dict) -> list:
    return [op for op in draft.get("operations", []) if op.get("status") == "denied"]


def approved_ops(draft: dict) -> list:
    return [op for op in draft.get("operations", []) if op.get("status") == "approved"]


@dataclass
class Next:
    cluster_id: str
    action: str                 # under_review | redraft | close
    latest: dict
    attempts: list


def next_step(cluster_id: str, attempts: list) -> Optional[Next]:
    """None when the chain has nothing open (every attempt closed)."""
    live = [d for d in attempts if d.get("status") in ("pending", "reviewed")]
    if not live:
        return None
    latest = attempts[-1]
    if any(d.get("status") == "pending" for d in live):
        return Next(cluster_id, REVIEW, next(d for d in live if d.get("status") == "pending"), attempts)
    if latest.get("status") != "reviewed":
        # the latest attempt is closed but an older one is still reviewed: finish closing
        return Next(cluster_id, CLOSE, latest, attempts)
    denied = denied_ops(latest)
    if denied and not latest.get("terminal"):
        return Next(cluster_id, REDRAFT, latest, attempts)
    return Next(cluster_id, CLOSE, latest, attempts)


def plan(drafts: list) -> list:
    """Every chain with something open, oldest first."""
    out = []
    for cid, attempts in group_chains(drafts).items():
        step = next_step(cid, attempts)
        if step is not None:
            out.append(step)
    out.sort(key=lambda s: float(s.attempts[0].get("created_at") or 0))
    return out


def held_short_ids(drafts: list) -> set:
    """Short-terms a pending operation of a pending draft cites: left alone by a sleep."""
    held: set = set()
    for d in drafts:
        if d.get("status") != "pending":
            continue
        for op in d.get("operations", []):
            if op.get("status", "pending") == "pending":
                held.update(op.get("source_short_ids") or [])
    return held


def chain_cores(attempts: list) -> list:
    """Cores this chain has created so far, as candidate dicts."""
    out = []
    for d in attempts:
        for op in approved_ops(d):
            if op.get("kind") in ("new_core", "supersede", "verbatim") and op.get("long_term_id"):
                out.append({"id": op["long_term_id"], "content": op.get("edited_content") or op.get("content") or "",
                            "topic": op.get("topic"), "satellites": 0})
    return out
