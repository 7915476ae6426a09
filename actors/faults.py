"""Test-only fault hooks (a Crash message, or a death in the next on_start), off unless a test calls allow().

Off, nothing in the service can crash its own actors on purpose.
"""
from __future__ import annotations

from dataclasses import dataclass

_allowed = False


@dataclass(frozen=True)
class Crash:                    # the handler raises (only while fault hooks are allowed)
    where: str = "tell"


class FaultsOff(RuntimeError):
    """inject_fault was called while the fault hooks are off."""


def allow(on: bool = True) -> bool:
    """Turn the fault hooks on (or off); returns what they were."""
    global _allowed
    was, _allowed = _allowed, bool(on)
    return was


def allowed() -> bool:
    return _allowed

