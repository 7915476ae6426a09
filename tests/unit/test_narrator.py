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


# ---------------------------------------------------------------- the detail lines, as tables
WAKE = [
    ("never checked", None, "Wake-up: not checked yet"),
    ("checking", {"ok": None, "summary": "checking...", "last": {}}, "Wake-up: checking..."),
    ("a script exited", {"ok": True, "summary": "ok: claude as me (6 checks)",
                         "last": {"draft_submitted": {"at": NOW - 30, "exit_code": 6, "seconds": 0.4}}},
     "Wake-up: ok: claude as me (6 checks) · last: draft_submitted 30 s ago (%s): exited 6 after 0.4 s"),
    ("still running, newest first", {"ok": True, "summary": "ok: x", "last": {
        "draft_submitted": {"at": NOW - 300, "ok": True, "type": "endpoint", "status": 204},
        "chain_closed": {"at": NOW - 5, "running": True, "pid": 42}}},
     "Wake-up: ok: x · last: chain_closed 5 s ago (%s): running (pid 42); draft_submitted 5 min ago (%s): "
     "sent (HTTP 204)"),
    ("a killed and a failed one", {"ok": True, "summary": "ok: x", "last": {
        "a": {"at": NOW - 10, "exit_code": -9, "seconds": 120, "killed": True},
        "b": {"at": NOW - 20, "ok": False, "error": "no claude"}}},
     "Wake-up: ok: x · last: a 10 s ago (%s): exited -9 after 2 min, killed; b 20 s ago (%s): failed (no claude)"),
]


@pytest.mark.parametrize("name,wake,line", WAKE, ids=[r[0] for r in WAKE])
def test_the_wake_up_line_table(name, wake, line):
    from hippocampus.status.words import hhmm

    times = sorted({r.get("at") for r in ((wake or {}).get("last") or {}).values()}, reverse=True)
    assert narrate({**HEALTHY, "wakeup": wake}, NOW)["wakeup"] == line % tuple(hhmm(t) for t in times)


def test_a_failing_wake_up_is_worded_once_in_the_headline():
    say = narrate({**HEALTHY, "wakeup": {"ok": False, "summary": "would fail: cwd: /gone is missing", "last": {}}},
                  NOW)
    assert "would fail: cwd: /gone is missing" in say["headline"]
    assert say["wakeup"] == "Wake-up: would fail (see above)"


MANAGED = {"managed": True, "state": "ready", "via": "llama-server", "started_by_us": True, "last_used": NOW - 120,
           "keep_warm_seconds": 600}
MODEL = [
    ("mechanical, no voice card", {"model_configured": False},
     [["model", "Mechanical: no model configured: clusters become cores by their longest entry", ""],
      ["voice card", "off (opt-in)", ""]]),
    ("always on, answering, a card not written", {"model_health": {"answering": True},
                                                  "voice": {"enabled": True, "version": 0}},
     [["model", "Answering: http://127.0.0.1:8091/v1", ""], ["state", "unknown", ""],
      ["started by", "not managed here (always on)", ""], ["voice card", "on, not written yet", ""]]),
    ("managed and ready, card v3", {"model_lifecycle": MANAGED, "voice": {"enabled": True, "version": 3}},
     [["model", "Managed: ready: started when a sleep or redraft needs it", ""], ["state", "ready", "good"],
      ["started by", "llama-server (this service started it)", ""], ["last used", "2 min ago (%s)", ""],
      ["keep warm", "10 min", ""], ["voice card", "version 3", ""]]),
    ("not answering", {"model_health": {"answering": False, "error": "ConnectionError"}},
     [["model", "Not answering: http://127.0.0.1:8091/v1 does not answer", "bad"], ["state", "unknown", ""],
      ["started by", "not managed here (always on)", ""], ["voice card", "off (opt-in)", ""]]),
]


@pytest.mark.parametrize("name,changes,rows", MODEL, ids=[r[0] for r in MODEL])
def test_the_model_rows_table(name, changes, rows):
    from hippocampus.status.words import hhmm

    got = narrate({**HEALTHY, **changes}, NOW)["cards"]["model"]["rows"]
    assert got == [[k, v.replace("%s", hhmm(NOW - 120)), level] for k, v, level in rows]


def test_a_model_that_failed_to_start_says_its_error_once():
    say = narrate({**HEALTHY, "model_lifecycle": {"managed": True, "state": "failed", "last_error": "exit 1: no GPU"}},
                  NOW)
    assert say["headline"] == "The model failed to start: exit 1: no GPU."
    assert ["last error", "see above", "bad"] in say["cards"]["model"]["rows"]
    assert ["state", "failed", "bad"] in say["cards"]["model"]["rows"]


def test_the_busy_note_and_the_actors_words():
    say = narrate({**HEALTHY, "busy": {"what": "tend", "since": NOW},
                   "actors": {"ripple": {"state": "failed", "restarts": 1, "last_error": "boom",
                                         "last_error_at": NOW}}}, NOW)
    assert say["busy"] == "tend running…"
    assert say["actors"]["ripple"]["restarts"] == "1 restart"
    assert say["actors"]["ripple"]["error"].endswith(": boom")
    assert narrate(HEALTHY, NOW)["busy"] == ""
