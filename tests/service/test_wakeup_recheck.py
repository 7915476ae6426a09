"""The wake-up check is read again now and then: a fix an operator makes clears the headline soon after."""
from __future__ import annotations

import getpass
import os
import sys
import time

import pytest
import requests

import actors.watch as watches
from tests.harness.reviewer import wait_for

pytestmark = pytest.mark.skipif(os.name == "nt", reason="a POSIX script and accounts")


class Later:
    """The clock the watches read their intervals on, moved on by `ahead` seconds (the wall clock as it is)."""

    def __init__(self) -> None:
        self.ahead = 0.0

    def monotonic(self) -> float:
        return time.monotonic() + self.ahead

    def __getattr__(self, name):
        return getattr(time, name)


def test_an_installed_program_clears_the_would_fail_headline_within_a_minute(make_config, start_service, tmp_path,
                                                                              monkeypatch):
    """Found: the check was read at start and after each ripple only, so after the operator installed the missing
    program the headline said 'A wake-up of the main model would fail' until the next ripple or a restart."""
    later = Later()
    monkeypatch.setattr(watches, "time", later)
    program = tmp_path / "wake.sh"                  # not there yet
    cfg = make_config(ripple={"type": "script", "command": [str(program), "{message}"], "run_as": getpass.getuser(),
                              "events": ["draft_submitted"]})
    svc = start_service(cfg)

    def status() -> dict:
        return requests.get(svc.url + "/status", timeout=10).json()
    st = wait_for(lambda: (lambda s: s if s["wakeup"].get("ok") is False else None)(status()), timeout=10,
                  what="the start-up check to say the program is missing")
    assert "would fail" in st["say"]["headline"] and str(program) in st["say"]["headline"], st["say"]["headline"]
    program.write_text(f"#!{sys.executable}\nimport sys\n", encoding="utf-8")     # the operator installs it
    program.chmod(0o755)
    later.ahead = 61.0                              # a minute on (no ripple, no restart)
    st = wait_for(lambda: (lambda s: s if s["wakeup"].get("ok") is True else None)(status()), timeout=10,
                  what="the wake-up check to be read again")
    assert "would fail" not in st["say"]["headline"], st["say"]["headline"]
