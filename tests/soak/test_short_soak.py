"""The short soak, inside the README's test command: a handful of unattended nights, no faults, under
60 s. The script ripple, the HTTP nudge and the hand-over are the long run's (python -m tests.soak);
this one wakes the main model through the endpoint ripple, nudges through the MCP tool, keeps the
model warm between a review and a redraft, and shares the test session's SerenMemory."""
from __future__ import annotations

import os
import time

import pytest

from tests.soak.runner import run
from tests.soak.world import Options, SharedMemory

pytestmark = pytest.mark.skipif(os.name == "nt", reason="the stand-in's wrapper is a POSIX shell script")


def test_a_handful_of_unattended_nights(memory, tmp_path):
    memory.set_lifetimes(short_term_seconds=30)
    lines: list = []
    t0 = time.monotonic()
    result = run(Options(nights=4, ripple="endpoint", nudge="mcp", handover=False), tmp_path / "world",
                 out=lines.append, memory=SharedMemory(memory.url))
    took = time.monotonic() - t0
    report = "\n".join(lines)
    assert not result.violations, report
    assert result.nights == 4 and result.landed >= 4, report
    assert lines[-1] == f"nights: 4  landed: {result.landed}  faults: 0  violations: 0"
    assert took < 60, f"the short soak took {took:.0f} s\n{report}"
