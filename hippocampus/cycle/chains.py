"""What a chain needs next, from the drafts Memory holds. A chain is the drafts sharing a cluster_id, by attempt:
a pending attempt is under review; a latest attempt reviewed with denials, not terminal, is a redraft due; anything
else left open is closed."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

REVIEW, REDRAFT, CLOSE = "under_review", "redraft", "close"


def plan(drafts: list) -> list:
    """Every chain with something open, oldest first."""
    unique: dict = {}
    for d in drafts:
        unique.setdefault(d.get("id"), d)
    chains: dict = {}
    for d in unique.values():
        chains.setdefault(d.get("cluster_id") or d["id"], []).append(d)
    for attempts in chains.values():
        attempts.sort(key=lambda d: (int(d.get("attempt") or 1), float(d.get("created_at") or 0)))
    steps = (next_step(cid, attempts) for cid, attempts in chains.items())
    return sorted((s for s in steps if s is not None), key=lambda s: float(s.attempts[0].get("created_at") or 0))


def ops_with(draft: dict, status: str) -> list:
    return [op for op in draft.get("operations", []) if op.get("status") == status]


def brief_of(attempts: list) -> Optional[str]:
    return next((d.get("brief_id_used") for d in attempts if d.get("brief_id_used")), None)


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
    pending = next((d for d in live if d.get("status") == "pending"), None)
    if pending is not None:
        return Next(cluster_id, REVIEW, pending, attempts)
    redraft = latest.get("status") == "reviewed" and ops_with(latest, "denied") and not latest.get("terminal")
    return Next(cluster_id, REDRAFT if redraft else CLOSE, latest, attempts)


def chain_cores(attempts: list) -> list:
    """The ids of the cores this chain has made so far (Memory holds what they say now, and their satellites)."""
    return [op["long_term_id"] for d in attempts for op in ops_with(d, "approved")
            if op.get("kind") in ("new_core", "supersede", "verbatim") and op.get("long_term_id")]
