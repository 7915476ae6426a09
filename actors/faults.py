"""Test-only fault hooks: a child told to crash (a Crash message), or to die in its next on_start.

Off unless a test turns them on (tests/conftest.py does, with allow()). Off, a Crash that reaches a
child is refused with a log line and the child carries on, and Runtime.inject_fault raises FaultsOff:
nothing in the service can crash its own actors on purpose.
"""
from __future__ import annotations

from dataclasses import dataclass

_allowed = False


@dataclass(frozen=True)
class Crash:                    # the handler raises (only while fault hooks are allowed)
    where: str = "tell"


class FaultsOff(RuntimeError):
    """inject_fault was called while the fault hooks are off (outside the tests)."""


def allow(on: bool = True) -> bool:
    """Turn the fault hooks on (or off); returns what they were."""
    global _allowed
    was, _allowed = _allowed, bool(on)
    return was


def allowed() -> bool:
    return _allowed


def check(name: str, where: str) -> None:
    if not _allowed:
        raise FaultsOff(f"no fault injected into {name} ({where}): the fault hooks are test-only and off "
                        f"(a test turns them on with actors.faults.allow())")
