"""The words of the lists beside the status (/queue, /quality, /events), as tables: the viewer lays them
out and words none of them."""
from __future__ import annotations

import pytest

from hippocampus.status import lists as boards

NOW = 1_800_000_000.0


def _draft(ops, created=NOW - 30, **more):
    return {"id": "d1", "summary": "tea", "attempt": 1, "created_at": created,
            "operations": [{"kind": k, "status": st} for k, st in ops], **more}


QUEUE = [
    ("nothing waits", [], None, "Nothing waits for review.", "ok", []),
    ("one draft, all pending", [_draft([("new_core", "pending")])], None,
     "1 draft, 1 operation waiting for a decision.", "ok", ["1 operation · attempt 1 · waiting under a minute"]),
    ("a last attempt, partly decided", [_draft([("new_core", "pending"), ("attach", "approved")], NOW - 7200,
                                               attempt=3, terminal=True)], None,
     "1 draft, 1 operation waiting for a decision.", "ok",
     ["2 operations (1 pending) · attempt 3 (last) · waiting 2 h"]),
    ("Memory down", [], "SerenMemory at http://m is not answering",
     "Memory is not answering, so what waits for review cannot be read until it does.", "bad", []),
]


@pytest.mark.parametrize("name,drafts,error,note,level,lines", QUEUE, ids=[r[0] for r in QUEUE])
def test_the_queue_table(name, drafts, error, note, level, lines):
    out = boards.queue(drafts, NOW, error)
    assert out["say"] == {"note": note, "level": level}
    assert [d["say"] for d in out["drafts"]] == lines
    assert out["count"] == len(lines)


GROUP = {"model": "small", "voice": 2, "proposed": 3, "approved_first": 1, "approved_after_redraft": 1,
         "approved_edited": 0, "denied_to_end": 1, "waiting": 0, "calls": 4, "cut_off_rate": 0.25,
         "invented_rate": None, "critique_words": [["vague", 2]]}
QUALITY = [
    ("not read yet", {"ready": False, "groups": [], "error": None}, "Reading the reviews in Memory…", "ok"),
    ("could not be read", {"ready": False, "groups": [], "error": "timeout"},
     "Memory's drafts could not be read, so there is no report yet.", "bad"),
    ("no drafts", {"ready": True, "groups": [], "error": None}, "No drafts on record yet.", "ok"),
    ("two drafts", {"ready": True, "drafts": 2, "groups": [GROUP], "error": None},
     "2 drafts on record; each operation counts under the model and card of the draft that first proposed it.", "ok"),
    ("two drafts, a stale read", {"ready": True, "drafts": 2, "groups": [GROUP], "error": "timeout"},
     "2 drafts on record; each operation counts under the model and card of the draft that first proposed it. "
     "(not refreshed: Memory did not answer)", "bad"),
]


@pytest.mark.parametrize("name,rep,note,level", QUALITY, ids=[r[0] for r in QUALITY])
def test_the_quality_table(name, rep, note, level):
    assert boards.quality(rep)["say"] == {"note": note, "level": level}


def test_a_group_with_no_calls_says_so_not_n_a():
    """Found: "cut off n/a of 0 calls"."""
    rates = boards.group_say({**GROUP, "calls": 0, "cut_off_rate": None, "critique_words": []})["rates"]
    assert rates == "no model calls on record"


def test_a_quality_group_in_words():
    assert boards.quality({"ready": True, "drafts": 2, "groups": [GROUP]})["groups"][0]["say"] == {
        "badge": "voice card v2",
        "counts": "3 operations proposed · 1 approved first time · 1 after a redraft · 0 with edits · "
                  "1 denied to the end",
        "rates": "cut off 25% of 4 model calls · critiques: vague (2)"}
    assert boards.group_say({**GROUP, "voice": None, "critique_words": []})["badge"] == "no voice card"


EVENTS = [
    ("a draft sent and rippled", {"type": "draft_submitted", "draft_id": "3f2a000011112222", "operations": 2,
                                  "delivery": {"delivered": True}, "ripple": {"ok": True}},
     "2 operations", "webhook sent · ripple fired"),
    ("a crash, the webhook down", {"type": "actor_crashed", "actor": "ripple", "restarts": 1,
                                   "delivery": {"delivered": False, "error": "HTTP 500"}},
     "the part that wakes the main model · 1 restart", "webhook not sent (HTTP 500)"),
    ("a ripple kept", {"type": "chain_closed", "landed": 3, "denied": 0, "ripple": {"skipped": True}},
     "3 landed", "ripple kept: the last one still runs"),
    # found: a kept ripple the brief made needless went on saying "kept" in the History for good
    ("a kept ripple dropped", {"type": "brief_requested", "nudge": 1,
                               "ripple": {"skipped": True, "dropped": "the brief arrived"}},
     "asked again (1 reminder so far)", "ripple not fired: the brief arrived"),
    ("a ripple refused", {"type": "sleep_done", "quiet": True, "catch_up": True,
                                         "ripple": {"refused": True, "error": "run_as"}},
     "quiet · catch-up", "ripple refused (run_as)"),
    ("retried", {"type": "brief_requested", "nudge": 2, "ripple": {"ok": True, "retried": True}},
     "asked again (2 reminders so far)", "ripple fired on retry"),
    # found: a nudge shown as a bare "1", and the demo narrating due_at=1796141841.4453628
    ("a nudge", {"type": "nudged", "count": 1, "last_at": NOW, "woke": True}, "1 nudge · a turn started at once", ""),
    ("a burst of nudges", {"type": "nudged", "count": 3, "woke": False},
     "3 nudges in a row · noted: the part that keeps the schedule was down, and takes it when it is back", ""),
    ("a brief asked for", {"type": "brief_requested", "due_at": NOW, "intent_id": "n1"},
     "for the sleep due at %s" % __import__("hippocampus.status.words", fromlist=["hhmm"]).hhmm(NOW), ""),
    ("a purge", {"type": "purged", "count": 2, "ids": ["a", "b"]}, "2 flagged memories purged", ""),
    ("failed", {"type": "tend_resubmitted", "attempt": 2, "by": "tend", "ripple": {"ok": False, "error": "exit 1"}},
     "attempt 2 · by tend", "ripple failed (exit 1)"),
]


@pytest.mark.parametrize("name,event,facts,outcome", EVENTS, ids=[r[0] for r in EVENTS])
def test_the_events_table(name, event, facts, outcome):
    assert boards.event_say(event) == {"facts": facts, "outcome": outcome}


def test_the_events_note_names_the_webhook_only_when_one_is_set():
    assert boards.events_note(True)["note"].startswith("A webhook is set")
    assert boards.events_note(False) == {"note": ""}


SUMMARIES = [
    ("2 new_core, 1 attach across cycling, commute", "2 new memories, 1 addition to a memory about cycling, commute"),
    ("redraft of 0123456789abcdef0123456789abcdef (attempt 2)", "A redraft of a denied draft (attempt 2)"),
    ("tea", "Tea"), (None, "(no summary)"),
]


@pytest.mark.parametrize("summary,words", SUMMARIES)
def test_a_drafts_summary_in_a_persons_words(summary, words):
    assert boards.summary_words(summary) == words


def test_memory_down_keeps_what_its_last_answer_said_as_of_when():
    from hippocampus.status.words import hhmm
    out = boards.queue([_draft([("new_core", "pending")])], NOW, "SerenMemory at http://m is not answering", NOW - 90)
    assert out["count"] == 1 and out["drafts"][0]["kind_words"] == ["new memory"]
    assert out["say"] == {"level": "bad", "note": f"Memory is not answering: as of {hhmm(NOW - 90)}, when it last "
                                                  "answered, 1 draft, 1 operation waiting for a decision."}
    assert out["times"] == {hhmm(NOW - 90): NOW - 90}


def test_a_history_row_of_a_tend_whose_redraft_failed_says_so():
    """Found: a tend is put in the history because its redraft failed, and the History row read 'quiet: nothing
    to tend' - the row kept no model_failures to word."""
    from hippocampus.cycle.reports import TendReport
    from hippocampus.cycle.tend import HISTORY_KEYS

    report = TendReport(started_at=NOW, finished_at=NOW + 5, model_failures=[
        {"stage": "redraft", "topic": "garden", "op": 1, "why": "the model's answer was not the JSON asked for"}])
    row = report.pick(HISTORY_KEYS)
    assert boards.run_words(row) == "the model could not write 1 redraft", boards.run_words(row)
