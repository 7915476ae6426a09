"""The messages the actors are told or asked. Small, plain, immutable."""
from __future__ import annotations

from dataclasses import make_dataclass
from typing import Any


def _message(name: str, *fields) -> type:
    """A frozen dataclass; a field is a name, or (name, default)."""
    return make_dataclass(name, [(f, Any) if isinstance(f, str) else (f[0], Any, f[1]) for f in fields],
                          frozen=True, namespace={"__module__": __name__})


Tick = _message("Tick", "at")                       # the ticker's beat, fanned out by the supervisor
ChildFailed = _message("ChildFailed", "name", "urn", "error")
RestartChild = _message("RestartChild", "name", ("force", False))
Ping = _message("Ping")                             # answered once the supervisor has started its children

Wake = _message("Wake", ("at", 0.0))                # a nudge arrived (sent at `at`, monotonic)
Released = _message("Released")                     # the cycle lock was let go: a pending nudge runs its tick now

# chain and sleeper: `token` is the cycle lock, taken by the caller and released by the handler
Tend = _message("Tend", "redraft", ("token", None))
Check = _message("Check", ("token", None))
Sleep = _message("Sleep", "ask_for_brief", ("token", None))
# the tick's two parts (hippocampus.cycle.executor), run under the scheduler's own hold of the cycle lock
TendSteps = _message("TendSteps", "snapshot", "steps")
CheckSteps = _message("CheckSteps", "snapshot", "steps")

Ensure = _message("Ensure")
Release = _message("Release", "busy_seconds")
Handover = _message("Handover")
ModelTick = _message("ModelTick", "chain_open")

Fire = _message("Fire", "event")
RetrySkipped = _message("RetrySkipped")
Ended = _message("Ended", "event_type")             # a wake-up's child ended: publish its exit code
Publish = _message("Publish", "event")
Recheck = _message("Recheck")                       # read again on the next beat
