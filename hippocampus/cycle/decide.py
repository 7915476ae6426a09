"""The tick's one decision, pure: (snapshot, state, sleep config, now, what was asked) -> the steps, in the
brief's order (finish a submit or close, purge, close, redraft, then the gate; a sleep by hand is the gate now)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional

from hippocampus.cycle import chains
from hippocampus.cycle.bedtime import bedtime
from hippocampus.cycle.snapshot import Snapshot

# the chain actor's steps
FINISH_SUBMIT = "finish_submit"       # a draft whose POST was under way when the service stopped
FINISH_CLOSE = "finish_close"         # a cull recorded in the state file, cut short
CLOSE = "close"                       # a chain that landed
REDRAFT = "redraft"                   # denied operations, redrafted from the critique now
DEFER = "defer"                       # denied operations left for sleep time (tend cycle off)
# the sleeper's steps
PURGE = "purge"
WAIT_CHAIN = "wait_chain"             # a chain is open: one cycle at a time
SLEEP = "sleep"
NOT_BEDTIME = "not_bedtime"
MISS = "miss"                         # past bedtime with no brief
ASK_BRIEF = "ask_brief"               # a sleep by hand with no brief waiting: ask for one instead

CHAIN_STEPS = frozenset({FINISH_SUBMIT, FINISH_CLOSE, CLOSE, REDRAFT, DEFER})
CHECK_STEPS = frozenset({PURGE, WAIT_CHAIN, SLEEP, NOT_BEDTIME, MISS, ASK_BRIEF})


@dataclass(frozen=True)
class Step:
    kind: str
    chain: Any = None                 # chains.Next, for CLOSE / REDRAFT / DEFER
    cluster_id: Optional[str] = None  # FINISH_CLOSE
    brief: Optional[dict] = None      # SLEEP
    misses: int = 0                   # MISS: the count after this one
    ask: bool = False                 # MISS: ask the main model for a brief now
    pull: bool = False                # MISS: let the small model pull one (brief_pull)


@dataclass(frozen=True)
class Asked:
    """What this tick was asked to do. redraft: True now, False not now, None sleep time decides."""
    tend: bool = True
    check: bool = True
    redraft: Optional[bool] = True
    by_hand: bool = False
    ask_for_brief: bool = True


def decide(snap: Snapshot, state: Mapping, cfg, now: float, asked: Asked = Asked()) -> list:
    steps: list = []
    closing = state.get("closing") or {}
    if state.get("submitting"):
        steps.append(Step(FINISH_SUBMIT))
    if asked.tend:
        steps.extend(Step(FINISH_CLOSE, cluster_id=cid) for cid in closing)
    if asked.check:
        steps.append(Step(PURGE))
    if asked.tend:
        steps.extend(Step(CLOSE, chain=c) for c in snap.chains_to(chains.CLOSE) if c.cluster_id not in closing)
        # a chain whose cull is recorded is being closed
        due = [c for c in snap.chains_to(chains.REDRAFT) if c.cluster_id not in closing]
        redraft = asked.redraft
        if redraft is None and due:          # sleep time: bedtime passed, or a new brief waiting
            redraft = now >= bedtime(cfg, state, now) or snap.brief is not None
        steps.extend(Step(REDRAFT if redraft else DEFER, chain=c) for c in due)
    if asked.check:
        steps.append(_gate(snap, state, cfg, now))
    if asked.by_hand:
        steps.append(Step(WAIT_CHAIN) if snap.chain_open else
                     Step(ASK_BRIEF) if snap.brief is None and asked.ask_for_brief and cfg.brief_request else
                     Step(SLEEP, brief=snap.brief))
    return steps


def _gate(snap: Snapshot, state: Mapping, cfg, now: float) -> Step:
    if snap.chain_open:
        return Step(WAIT_CHAIN)
    if snap.brief is not None:
        return Step(SLEEP, brief=snap.brief)
    if now < bedtime(cfg, state, now):
        return Step(NOT_BEDTIME)
    misses = int(state.get("brief_misses") or 0) + 1
    return Step(MISS, misses=misses, ask=bool(cfg.brief_request) and misses % cfg.brief_check_misses == 0,
                pull=bool(cfg.brief_pull) and misses >= cfg.brief_check_misses)
