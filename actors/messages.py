"""The messages the actors are told or asked. Small, plain, immutable."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Tick:                     # the ticker's beat, fanned out by the supervisor
    at: float


@dataclass(frozen=True)
class ChildFailed:
    name: str
    urn: str
    error: str


@dataclass(frozen=True)
class RestartChild:
    name: str
    force: bool = False


@dataclass(frozen=True)
class ChildStopped:             # an instance an operator's restart stopped has ended (or was given up on)
    name: str
    urn: str
    ended: bool


@dataclass(frozen=True)
class Ping:                     # answered once the supervisor has started its children
    pass


# scheduler
@dataclass(frozen=True)
class Wake:                     # a nudge arrived (sent at `at`, monotonic)
    at: float = 0.0


@dataclass(frozen=True)
class Released:                 # the cycle lock was let go: a pending nudge runs its tick now
    pass


# chain and sleeper: `token` is the cycle lock, taken by the caller and released by the handler
@dataclass(frozen=True)
class Tend:
    redraft: bool
    token: Any = None


@dataclass(frozen=True)
class Check:
    token: Any = None


@dataclass(frozen=True)
class Sleep:
    ask_for_brief: bool
    token: Any = None


# the tick's two parts (hippocampus.cycle.executor), run under the scheduler's own hold of the cycle lock
@dataclass(frozen=True)
class TendSteps:
    snapshot: Any
    steps: tuple


@dataclass(frozen=True)
class CheckSteps:
    snapshot: Any
    steps: tuple


# lifecycle
@dataclass(frozen=True)
class Ensure:
    pass


@dataclass(frozen=True)
class Release:
    busy_seconds: float


@dataclass(frozen=True)
class Handover:
    pass


@dataclass(frozen=True)
class ModelTick:
    chain_open: bool


# ripple and notifier
@dataclass(frozen=True)
class Fire:
    event: dict


@dataclass(frozen=True)
class RetrySkipped:
    pass


@dataclass(frozen=True)
class Ended:                    # a wake-up's child ended: publish its exit code
    event_type: str


# the watches (actors/watch.py)
@dataclass(frozen=True)
class Recheck:                  # read again on the next beat
    pass


@dataclass(frozen=True)
class Publish:
    event: dict
