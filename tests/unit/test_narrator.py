"""The one narrator, as a table: a situation -> the headline (and its level and button), with the cards
never contradicting it and an error's text said once."""
from __future__ import annotations

import pytest

from hippocampus.status.narrator import narrate

NOW = 1_800_000_000.0
HEALTHY = {"memory": {"reachable": True, "url": "http://127.0.0.1:7420"}, "model_configured": True,
           "model_url": "http://127.0.0.1:8091/v1", "mode": "thread", "tick_seconds": 300, "tend_cycle": True,
           "tend_interval_seconds": 600, "interval_seconds": 72000, "bedtime_at": NOW + 4 * 3600,
           "actors": {"sleeper": {"state": "running"}}, "chain": {"chain_open": False}}
DRAFT = {"chain_open": True, "under_review": 1, "chain_brief_id": "b1234567890",
         "waiting_draft": {"id": "3f2a000011112222", "operations": 3, "created_at": NOW - 3600}}

ROWS = [
    ("a draft waiting", {"chain": DRAFT},
     "Draft 3f2a0000… (3 operations) has waited 60 min for review in Memory: review it, then nudge.", "wait", None),
    ("denied operations waiting for sleep time", {"chain": {"chain_open": True, "redrafts_due": 1},
                                                  "redrafts_waiting_since": NOW - 600, "tend_cycle": False},
     "Denied operations have waited since", "wait", "tend"),
    ("Memory down", {"memory": {"reachable": False, "url": "http://m:7420", "error": "ConnectionError reaching m"}},
     "Memory at http://m:7420 is not answering (ConnectionError reaching m): nothing can sleep", "bad", None),
    ("the model configured but down", {"model_health": {"answering": False, "error": "ConnectionError"}},
     "The model at http://127.0.0.1:8091/v1 is configured but not answering", "bad", None),
    ("mechanical mode", {"model_configured": False}, "Quiet and healthy; bedtime in 4 h", "ok", "sleep"),
    ("the last sleep failed", {"last_sleep": {"error": "ModelUnavailable: no answer", "finished_at": NOW - 60}},
     "The last sleep failed at", "bad", "sleep"),
    ("bedtime soon with no brief", {"bedtime_at": NOW + 600}, "Quiet and healthy; bedtime in 10 min", "ok", "sleep"),
    ("a brief requested", {"brief_wanted": True, "brief_requested_at": NOW - 60, "bedtime_at": NOW - 60},
     "Asked the main model for a brief at", "wait", None),
    ("a chain open on the brief that opened it", {"chain": DRAFT}, "Draft 3f2a0000…", "wait", None),
    ("the cycle busy", {"busy": {"what": "sleep", "since": NOW - 30},
                        "progress": {"what": "sleeping", "piles": 4, "piles_done": 1}},
     "A sleep is running since", "busy", None),
]


@pytest.mark.parametrize("name,changes,starts,level,action", ROWS, ids=[r[0] for r in ROWS])
def test_the_narrator_table(name, changes, starts, level, action):
    say = narrate({**HEALTHY, **changes}, NOW)
    assert say["headline"].startswith(starts), say["headline"]
    assert (say["level"], say["action"]) == (level, action)
    text = " ".join([say["headline"]] + [c["main"] + " " + c["sub"] for c in say["cards"].values()])
    for err in ("ConnectionError reaching m", "ModelUnavailable: no answer"):
        assert text.count(err) <= 1, text                       # an error's text appears once


def test_the_brief_card_names_the_brief_that_opened_the_chain_never_waiting_for_itself():
    say = narrate({**HEALTHY, "chain": DRAFT}, NOW)
    assert say["cards"]["brief"]["main"] == "In use" and "opened the chain" in say["cards"]["brief"]["sub"]
    assert "waiting, but a chain is open" not in say["headline"]


def test_modes_are_named_only_on_the_card_they_change():
    say = narrate({**HEALTHY, "model_configured": False, "mode": "external"}, NOW)
    assert "mechanical" not in say["headline"].lower() and "external" not in say["headline"].lower()
    assert say["cards"]["model"]["main"] == "Mechanical" and say["cards"]["tick"]["main"] == "External"
    assert say["pills"]["model"]["text"] == "model: mechanical"


def test_a_model_that_does_not_answer_is_never_a_green_pill():
    say = narrate({**HEALTHY, "model_health": {"answering": False, "error": "ConnectionError"}}, NOW)
    assert say["pills"]["model"] == {"text": "model: not answering", "state": "hot"}
    ok = narrate({**HEALTHY, "model_health": {"answering": True, "error": None}}, NOW)
    assert ok["pills"]["model"]["state"] == "ok"
