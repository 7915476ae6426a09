"""The demo narrates the events it hears in the narrator's words, never their raw fields (issue 32, item 5:
a brief request read `due_at=1796141841.4453628, intent_id=...`)."""
from __future__ import annotations

import re

from hippocampus.demo.run import describe_event
from hippocampus.status.words import hhmm

DUE = 1796141841.4453628


def test_a_brief_request_is_told_with_its_time_not_its_epoch():
    line = describe_event({"type": "brief_requested", "at": DUE - 60, "seq": 4, "due_at": DUE, "intent_id": "n1"})
    assert line == f"for the sleep due at {hhmm(DUE)}"
    assert not re.search(r"\d{10}|due_at=|intent_id=", line)


def test_an_event_the_demo_has_no_sentence_for_reads_as_the_viewer_shows_it():
    line = describe_event({"type": "model_start_failed", "at": DUE, "seq": 9, "error": "exit 1: no GPU"})
    assert line == "exit 1: no GPU"
    assert describe_event({"type": "purged", "at": DUE, "count": 2, "ids": ["a", "b"]}) == "2 flagged memories purged"
